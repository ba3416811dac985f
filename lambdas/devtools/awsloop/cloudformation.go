package awsloop

import (
	"encoding/xml"
	"sort"
	"sync"
	"time"
)

// CloudFormationService is AWS CloudFormation (awsQuery, 2010-05-15).
var CloudFormationService = Service{Name: "cloudformation", Protocol: AWSQuery, Version: "2010-05-15",
	XMLNamespace: "http://cloudformation.amazonaws.com/doc/2010-05-15/"}

// CloudFormation is a fake CloudFormation serving DescribeStacks of the
// stacks registered with AddStack: their name, status and outputs, which is
// what a tool reading a deployed stage's URLs needs. An unknown stack name
// is the ValidationError AWS answers ("Stack with id … does not exist").
type CloudFormation struct {
	*Server
	mu     sync.Mutex
	stacks map[string]map[string]string // stack name → output key → value
}

// NewCloudFormation returns a CloudFormation fake (not started) without
// stacks.
func NewCloudFormation() *CloudFormation {
	f := &CloudFormation{Server: NewServer(CloudFormationService), stacks: map[string]map[string]string{}}
	f.Handle("DescribeStacks", f.describeStacks)
	return f
}

// AddStack registers a stack in CREATE_COMPLETE with its outputs.
func (f *CloudFormation) AddStack(name string, outputs map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stacks[name] = outputs
}

type cfnOutput struct {
	OutputKey   string
	OutputValue string
}

type cfnStack struct {
	StackName    string
	StackID      string `xml:"StackId"`
	StackStatus  string
	CreationTime string
	Outputs      []cfnOutput `xml:"Outputs>member"`
}

type describeStacksResult struct {
	XMLName xml.Name   `xml:"r"`
	Stacks  []cfnStack `xml:"Stacks>member"`
}

func (f *CloudFormation) describeStacks(c *Call) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := []string{c.Get("StackName")}
	if names[0] == "" {
		names = names[:0]
		for n := range f.stacks {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var res describeStacksResult
	for _, n := range names {
		outs, ok := f.stacks[n]
		if !ok {
			return nil, ClientError("ValidationError", "Stack with id %s does not exist", n)
		}
		st := cfnStack{StackName: n, StackID: "arn:aws:cloudformation:" + c.Region + ":000000000000:stack/" + n + "/00000000-0000-4000-8000-000000000000",
			StackStatus: "CREATE_COMPLETE", CreationTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)}
		keys := make([]string, 0, len(outs))
		for k := range outs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			st.Outputs = append(st.Outputs, cfnOutput{OutputKey: k, OutputValue: outs[k]})
		}
		res.Stacks = append(res.Stacks, st)
	}
	return res, nil
}
