package awsrpc_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/dynastack/dynastack/lambdas/devtools/awsloop"
	"github.com/dynastack/dynastack/lambdas/platform/awsrpc"
)

// An EC2 call: the action's parameters as the Query protocol names them,
// the answer read through XML paths below its root element, and an AWS
// error's code from the error itself.
func ExampleClient_Query() {
	fake := awsloop.NewEC2() // a loopback EC2; in Lambda, no BaseEndpoint
	fake.AddInstance("i-0123456789abcdef0", awsloop.InstanceStopped)
	if err := fake.Start(); err != nil {
		panic(err)
	}
	defer fake.Close()

	ec2 := awsrpc.New(awsrpc.EC2, awsloop.ConfigAt("AKIDEXAMPLE", fake.URL()))
	var out struct {
		Changes []struct {
			Previous string `xml:"previousState>name"`
			Current  string `xml:"currentState>name"`
		} `xml:"instancesSet>item"`
	}
	err := ec2.Query(context.Background(), "StartInstances", url.Values{"InstanceId.1": {"i-0123456789abcdef0"}}, &out)
	fmt.Println(out.Changes[0].Previous, "->", out.Changes[0].Current, err)

	err = ec2.Query(context.Background(), "StartInstances", url.Values{"InstanceId.1": {"i-00000000000000000"}}, nil)
	fmt.Println(awsrpc.Code(err))
	// Output:
	// stopped -> pending <nil>
	// InvalidInstanceID.NotFound
}

// A JSON 1.1 call: the operation (awsrpc.SSM gives its X-Amz-Target
// prefix), the request as a value encoding/json marshals, the answer
// unmarshalled.
func ExampleClient_JSON() {
	fake := awsloop.NewSSM()
	fake.PutSecureString("/app/token", "s3cret")
	if err := fake.Start(); err != nil {
		panic(err)
	}
	defer fake.Close()

	ssm := awsrpc.New(awsrpc.SSM, awsloop.ConfigAt("AKIDEXAMPLE", fake.URL()))
	var out struct{ Parameter struct{ Value string } }
	err := ssm.JSON(context.Background(), "GetParameter", map[string]any{"Name": "/app/token", "WithDecryption": true}, &out)
	fmt.Println(out.Parameter.Value, err)
	// Output: s3cret <nil>
}
