// Package drift reads the output of the pinned CDK CLI's `cdk drift` (make
// drift, .github/workflows/drift.yml) into one report per drifted stack,
// with the drift that matters to a DynamoDB table (indexes, point-in-time
// recovery, TTL, streams, deletion protection, a deleted table) called out
// first.
package drift

import (
	"fmt"
	"regexp"
	"strings"
)

// Resource is one drifted resource of a stack.
type Resource struct {
	// Status is "modified" or "deleted".
	Status string
	// Type is the CloudFormation type; Path the construct path as the CLI
	// prints it (may be empty); LogicalID the template's id.
	Type, Path, LogicalID string
	// Properties are the drifted property paths (/PointInTimeRecoverySpecification/…).
	Properties []string
}

// Stack is the drift of one stack.
type Stack struct {
	// Name is the stack's display name (prod/itsm).
	Name      string
	Resources []Resource
}

// Drifted reports whether any resource of the stack drifted.
func (s Stack) Drifted() bool { return len(s.Resources) > 0 }

var (
	ansi     = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	resource = regexp.MustCompile(`^\[([~-])\] (AWS::\S+|Custom::\S+) (.*)$`)
	property = regexp.MustCompile(`^ [├└]─ \[[~+-]\] (/\S*)`)
)

// Parse reads `cdk drift` output (colours allowed) into its stacks, in
// order, drifted or not.
func Parse(out string) []Stack {
	var stacks []Stack
	section := ""
	for _, line := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		line = strings.TrimRight(line, " \r")
		switch {
		case strings.HasPrefix(line, "Stack "):
			stacks = append(stacks, Stack{Name: strings.TrimSpace(strings.TrimPrefix(line, "Stack "))})
			section = ""
			continue
		case line == "Modified Resources" || line == "Deleted Resources" || line == "Resources In Sync" || line == "Unchecked Resources":
			section = line
			continue
		}
		if len(stacks) == 0 {
			continue
		}
		st := &stacks[len(stacks)-1]
		if m := resource.FindStringSubmatch(line); m != nil && (section == "Modified Resources" || section == "Deleted Resources") {
			r := Resource{Status: "modified", Type: m[2]}
			if m[1] == "-" {
				r.Status = "deleted"
			}
			fields := strings.Fields(m[3])
			if len(fields) > 0 {
				r.LogicalID = fields[len(fields)-1]
				r.Path = strings.Join(fields[:len(fields)-1], " ")
			}
			st.Resources = append(st.Resources, r)
			continue
		}
		if m := property.FindStringSubmatch(line); m != nil && section == "Modified Resources" && len(st.Resources) > 0 {
			r := &st.Resources[len(st.Resources)-1]
			r.Properties = append(r.Properties, m[1])
		}
	}
	return stacks
}

// tableTypes are the CloudFormation types of a DynamoDB table.
var tableTypes = map[string]bool{"AWS::DynamoDB::GlobalTable": true, "AWS::DynamoDB::Table": true}

// tableSettings names the table settings whose drift is called out, by a
// property path's segment (TableV2's GlobalTable keeps some per replica:
// /Replicas/0/PointInTimeRecoverySpecification/…).
var tableSettings = []struct{ segment, what string }{
	{"GlobalSecondaryIndexes", "global secondary indexes (an index added, removed or changed by hand: the next deploy may fail or drop it)"},
	{"LocalSecondaryIndexes", "local secondary indexes"},
	{"PointInTimeRecoverySpecification", "point-in-time recovery (switched off or its period changed: restores may be impossible)"},
	{"TimeToLiveSpecification", "TTL (expired items are kept, or deleted when they should not be)"},
	{"StreamSpecification", "streams (a consumer may stop receiving records)"},
	{"DeletionProtectionEnabled", "deletion protection"},
	{"KeySchema", "the key schema"},
	{"AttributeDefinitions", "attribute definitions"},
}

// TableFindings lists the table-relevant drift of the stack, one line
// each: a deleted table, then each drifted table setting.
func TableFindings(s Stack) []string {
	var out []string
	for _, r := range s.Resources {
		if !tableTypes[r.Type] {
			continue
		}
		name := r.LogicalID
		if r.Path != "" {
			name = r.Path + " (" + r.LogicalID + ")"
		}
		if r.Status == "deleted" {
			out = append(out, fmt.Sprintf("table %s was DELETED outside CloudFormation", name))
			continue
		}
		for _, set := range tableSettings {
			for _, p := range r.Properties {
				if strings.Contains("/"+p+"/", "/"+set.segment+"/") {
					out = append(out, fmt.Sprintf("table %s: %s: %s", name, set.what, p))
				}
			}
		}
	}
	return out
}

// Title is the issue title of a stack's drift: stable, so a second run
// finds and updates the issue of the first.
func Title(stack string) string { return "Drift: " + stack }

// Issue renders the body of a drifted stack's issue in Markdown.
func Issue(s Stack, run string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`cdk drift` found %d drifted resource(s) in **%s**", len(s.Resources), s.Name)
	if run != "" {
		fmt.Fprintf(&b, " ([run](%s))", run)
	}
	b.WriteString(".\n\n")
	if f := TableFindings(s); len(f) > 0 {
		b.WriteString("### Table drift\n\n")
		for _, l := range f {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\nA table changed by hand is brought back by the next deploy, or the deploy fails: put the change into the stack (`infra/config`) or undo it (docs/deploying.md, \"Drift\").\n\n")
	}
	b.WriteString("### Resources\n\n| status | type | resource | properties |\n|---|---|---|---|\n")
	for _, r := range s.Resources {
		name := r.LogicalID
		if r.Path != "" {
			name = r.Path + " `" + r.LogicalID + "`"
		}
		props := strings.Join(r.Properties, "<br>")
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Status, r.Type, name, props)
	}
	return b.String()
}

// Summary is one line per stack for a terminal.
func Summary(stacks []Stack) []string {
	var out []string
	for _, s := range stacks {
		if !s.Drifted() {
			out = append(out, fmt.Sprintf("%s: no drift", s.Name))
			continue
		}
		f := TableFindings(s)
		out = append(out, fmt.Sprintf("%s: %d drifted resource(s), %d table finding(s)", s.Name, len(s.Resources), len(f)))
		for _, l := range f {
			out = append(out, "  "+l)
		}
	}
	return out
}
