// Package iamcalls proves each function's DynamoDB permissions both ways:
// every request a function made in the integration, e2e and local-runner
// tests is allowed by its role's policy, and every DynamoDB action its
// policy grants was used by one of those requests or is listed in unused
// with the reason it stays.
//
// The requests come from the call logs those tests write when
// DYNASTACK_CALLS_DIR is set (lambdas/devtools/ddbrecord: per function,
// the IAM action and the table or index each request needed); `make test`
// runs them so, then this check with DYNASTACK_CALLS_CHECK naming the same
// directory. The policies are every stage's golden templates, which
// TestGolden proves equal to the synthesized stages in the same run.
package iamcalls

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dynastack/dynastack/constructs/catalog"
	stakcontract "github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// EnvCheck names the directory of call logs to check. Unset, the check
// skips: the recording suites run in the same `go test` as this package,
// so only a later step can read their logs.
const EnvCheck = "DYNASTACK_CALLS_CHECK"

// snapshots holds the golden templates of every stage. The recording
// tests create their tables from the dev stage's, test/e2e from each.
const snapshots = "../snapshots"

// Why a granted action no recorded request uses stays granted. Reviewed
// here, in one place: a grant that a test starts using, or that the policy
// drops, must leave this table (the check fails on a stale entry).
const eventSourceMapping = "Lambda's event source mapping reads the stream with the function's role (the function's code never calls it); DynamoDB Local's stream is read by the runner's poller, not recorded"

var unused = map[string]map[grant]string{
	stakcontract.StreamConsumer.Name: {
		{"dynamodb:DescribeStream", "InboxA8E05DC3 stream"}:   eventSourceMapping,
		{"dynamodb:GetRecords", "InboxA8E05DC3 stream"}:       eventSourceMapping,
		{"dynamodb:GetShardIterator", "InboxA8E05DC3 stream"}: eventSourceMapping,
		{"dynamodb:ListStreams", "*"}:                         eventSourceMapping + "; ListStreams has no resource-level form",
	},
}

func TestRecordedCallsAllowed(t *testing.T) {
	dir := os.Getenv(EnvCheck)
	if dir == "" {
		t.Skipf("%s is unset: `make test` records the calls (DYNASTACK_CALLS_DIR) and then runs this check", EnvCheck)
	}
	logs, err := ddbrecord.ReadCallLogs(dir)
	require.NoError(t, err)
	stages, err := loadStages(snapshots)
	require.NoError(t, err)
	assert.Empty(t, check(stages, logs, unused), "calls outside the policies, or grants no call uses")
	t.Logf("%d call logs, %d distinct (function, action, table, index) calls, %d stages", logs.Files, len(logs.Calls), len(stages))
}

// check returns what is wrong: a recorded call the policy of its stage
// refuses, a grant (in any stage) that no call of any stage used and no
// reason keeps, a reason for nothing. Grants are compared across stages
// by logical id: the tests exercise the dev stage's tables most.
func check(stages []stage, logs ddbrecord.CallLogs, reasons map[string]map[grant]string) []string {
	if len(logs.Calls) == 0 {
		return []string{fmt.Sprintf("no recorded calls (%d call logs): run the suites with %s set (make test does)", logs.Files, ddbrecord.EnvCallsDir)}
	}
	byTable := map[string]stage{} // TableName → its stage
	for _, st := range stages {
		for name := range st.tables {
			byTable[name] = st
		}
	}
	var problems []string
	used := map[string]map[grant]bool{}
	for _, c := range logs.Calls {
		origin, ok := logs.Tables[c.Table]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s on table %s, which was not created from a template (testenv.CreateTables, the local runner)", c.Function, c.Action, c.Table))
			continue
		}
		st, ok := byTable[origin.TemplateName]
		if !ok || st.tables[origin.TemplateName] != origin.LogicalID {
			problems = append(problems, fmt.Sprintf("%s: %s on table %s (%s %s), which no stage defines", c.Function, c.Action, c.Table, origin.LogicalID, origin.TemplateName))
			continue
		}
		grants, ok := st.functions[c.Function]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no function of stage %s has DYNASTACK_SERVICE=%s", c.Function, st.name, c.Function))
			continue
		}
		allowed := false
		for _, g := range grants {
			if g.allows(c.Action, origin.LogicalID, c.Index) {
				allowed = true
				if used[c.Function] == nil {
					used[c.Function] = map[grant]bool{}
				}
				used[c.Function][g] = true
			}
		}
		if !allowed {
			on := origin.TemplateName
			if c.Index != "" {
				on += "/index/" + c.Index
			}
			problems = append(problems, fmt.Sprintf("%s calls %s on %s, which its role's policy in %s does not allow: grant it in infra/stacks", c.Function, c.Action, on, st.name))
		}
	}
	granted := map[string]map[grant]bool{} // function → grants in any stage
	for _, st := range stages {
		for _, fn := range slices.Sorted(maps.Keys(st.functions)) {
			if granted[fn] == nil {
				granted[fn] = map[grant]bool{}
			}
			for _, g := range st.functions[fn] {
				if granted[fn][g] {
					continue
				}
				granted[fn][g] = true
				reason, listed := reasons[fn][g]
				switch {
				case used[fn][g] && listed:
					problems = append(problems, fmt.Sprintf("%s: %s is used by a recorded call: remove it from unused", fn, g))
				case !used[fn][g] && !listed:
					problems = append(problems, fmt.Sprintf("%s is granted %s (in %s), which no recorded call uses: drop it from the grant in infra/stacks, test the code path that needs it, or list it in unused with the reason", fn, g, st.name))
				case listed && strings.TrimSpace(reason) == "":
					problems = append(problems, fmt.Sprintf("%s: %s is listed in unused without a reason", fn, g))
				}
			}
		}
	}
	for _, fn := range slices.Sorted(maps.Keys(reasons)) {
		for g := range reasons[fn] {
			if !granted[fn][g] {
				problems = append(problems, fmt.Sprintf("unused lists %s for %s, which no policy grants: remove the entry", g, fn))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// TestCheck runs the check on the dev stage with calls made up to break
// each rule, so that a check that passes everything cannot go unnoticed.
func TestCheck(t *testing.T) {
	stages, err := loadStages(snapshots)
	require.NoError(t, err)
	i := slices.IndexFunc(stages, func(s stage) bool { return s.name == "dev" })
	require.GreaterOrEqual(t, i, 0, "stages %v: want dev and others", stages)
	require.GreaterOrEqual(t, len(stages), 2, "stages %v: want dev and others", stages)
	dev := stages[i]
	// Every grant of every function in every stage used once, exactly on
	// its resource, by a call on that stage's table (prod grants more than
	// dev: rez_agent's type index).
	full := ddbrecord.CallLogs{Files: 1, Tables: map[string]ddbrecord.TableOrigin{}}
	names := map[string]string{} // logical id → dev table name
	for name, id := range dev.tables {
		names[id] = name
	}
	seen := map[ddbrecord.FunctionCall]bool{}
	for _, st := range stages {
		stNames := map[string]string{}
		for name, id := range st.tables {
			full.Tables[name+"-t1"] = ddbrecord.TableOrigin{LogicalID: id, TemplateName: name}
			stNames[id] = name
		}
		for fn, grants := range st.functions {
			for _, g := range grants {
				if _, listed := unused[fn][g]; listed {
					continue
				}
				id, index, _ := strings.Cut(g.Resource, "/index/")
				c := ddbrecord.FunctionCall{Function: fn, Access: ddbrecord.Access{Action: g.Action, Table: stNames[id] + "-t1", Index: index}}
				if !seen[c] {
					seen[c] = true
					full.Calls = append(full.Calls, c)
				}
			}
		}
	}
	require.Empty(t, check(stages, full, unused), "every grant used once")
	// A stage granting more than dev: nothing exercises the extra grant.
	wider := stage{name: "wider", functions: maps.Clone(dev.functions), tables: map[string]string{}}
	wider.functions["itsm"] = append(slices.Clone(dev.functions["itsm"]), grant{"dynamodb:DeleteItem", "Tickets83B11BB2"})
	with := func(calls ...ddbrecord.FunctionCall) ddbrecord.CallLogs {
		l := full
		l.Calls = append(slices.Clone(full.Calls), calls...)
		return l
	}
	call := func(fn, action, table, index string) ddbrecord.FunctionCall {
		return ddbrecord.FunctionCall{Function: fn, Access: ddbrecord.Access{Action: action, Table: table, Index: index}}
	}
	tests := []struct {
		name    string
		logs    ddbrecord.CallLogs
		reasons map[string]map[grant]string
		want    string
	}{
		{"nothing recorded", ddbrecord.CallLogs{}, unused, "no recorded calls"},
		{"a call the policy refuses", with(call("stak", "dynamodb:Scan", "stak-inbox-dev-t1", "")), unused,
			"stak calls dynamodb:Scan on stak-inbox-dev, which its role's policy in dev does not allow"},
		{"another function's table", with(call("itsm", "dynamodb:GetItem", "stak-inbox-dev-t1", "")), unused,
			"itsm calls dynamodb:GetItem on stak-inbox-dev"},
		{"an index not granted", with(call("itsm", "dynamodb:Query", "poc-itsm-tickets-dev-t1", "Other")), unused,
			"itsm calls dynamodb:Query on poc-itsm-tickets-dev/index/Other"},
		{"a table from no template", with(call("itsm", "dynamodb:GetItem", "scratch", "")), unused, "not created from a template"},
		{"a function of no template", with(call("ghost", "dynamodb:GetItem", "stak-inbox-dev-t1", "")), unused, "DYNASTACK_SERVICE=ghost"},
		{"a grant nobody uses", ddbrecord.CallLogs{Files: 1, Tables: full.Tables, Calls: slices.DeleteFunc(slices.Clone(full.Calls), func(c ddbrecord.FunctionCall) bool {
			return c.Function == "itsm" && c.Action == "dynamodb:GetItem"
		})}, unused, "itsm is granted dynamodb:GetItem on Tickets83B11BB2 (in dev), which no recorded call uses"},
		{"a reason for a grant in use", full, map[string]map[grant]string{"itsm": {{"dynamodb:GetItem", "Tickets83B11BB2"}: "x"}},
			"itsm: dynamodb:GetItem on Tickets83B11BB2 is used by a recorded call"},
		{"a stale reason", full, map[string]map[grant]string{"itsm": {{"dynamodb:Scan", "Tickets83B11BB2"}: "x"}},
			"unused lists dynamodb:Scan on Tickets83B11BB2 for itsm, which no policy grants"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := check(stages, tt.logs, tt.reasons)
			assert.True(t, slices.ContainsFunc(p, func(s string) bool { return strings.Contains(s, tt.want) }), "problems %q, want one containing %q", p, tt.want)
		})
	}
	p := check(append(slices.Clone(stages), wider), full, unused)
	if assert.Len(t, p, 1, "a stage granting more: problems") {
		assert.Contains(t, p[0], "itsm is granted dynamodb:DeleteItem on Tickets83B11BB2 (in wider)", "a stage granting more")
	}
}

func TestDescribeRefusesUnknownResources(t *testing.T) {
	tables := map[string]string{"T": "t-dev"}
	for raw, want := range map[string]string{
		`{"Fn::GetAtt":["T","Arn"]}`:                                   "T",
		`{"Fn::GetAtt":["T","StreamArn"]}`:                             "T stream",
		`{"Fn::Join":["",[{"Fn::GetAtt":["T","Arn"]},"/index/GSI1"]]}`: "T/index/GSI1",
		`"*"`:                                    "*",
		`"arn:aws:dynamodb:us-east-1:1:table/x"`: "",
		`{"Fn::GetAtt":["Other","Arn"]}`:         "",
		`{"Fn::Join":["",[{"Fn::GetAtt":["T","Arn"]},"/stream/*"]]}`: "",
	} {
		got, err := describe([]byte(raw), tables)
		assert.Equal(t, want, got, "describe(%s)", raw)
		if want == "" {
			assert.Error(t, err, "describe(%s)", raw)
		} else {
			assert.NoError(t, err, "describe(%s)", raw)
		}
	}
}

func TestStageFunctions(t *testing.T) {
	stages, err := loadStages(snapshots)
	require.NoError(t, err)
	// A function whose role the loader missed would pass every check.
	for _, st := range stages {
		for _, f := range catalog.Functions() {
			assert.NotEmpty(t, st.functions[f.Name], "%s: no DynamoDB grants found in %s", f.Name, st.name)
		}
	}
}
