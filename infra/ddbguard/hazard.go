package ddbguard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrMalformed marks input the guard cannot judge: an unreadable path, a file
// that is not JSON, a template without Resources, a table whose key schema
// is not the CloudFormation shape, layouts that cannot be paired, or an
// acknowledgement without a reason. The command exits 2 on it, so a broken
// input is never mistaken for "no hazards".
var ErrMalformed = errors.New("malformed input")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Class names one kind of hazard. The ids are stable: they appear in the
// output, in reviewed acknowledgement files and in tests, so renaming one
// turns every acknowledgement of it stale.
type Class string

// The hazard classes, in the order of docs/reviewing-changes.md.
const (
	MultipleGSIChanges     Class = "multiple-gsi-changes"
	GSIReplaced            Class = "gsi-replaced"
	LSIChange              Class = "lsi-change"
	StreamChange           Class = "stream-change"
	TTLChange              Class = "ttl-change"
	TableReplacement       Class = "table-replacement"
	LogicalIDChange        Class = "logical-id-change"
	TableTypeChange        Class = "table-type-change"
	ProtectionDropped      Class = "protection-dropped"
	MultipleReplicaChanges Class = "multiple-replica-changes"
	TableRemoved           Class = "table-removed"
	PITRDisabled           Class = "pitr-disabled"
	WarmThroughputLowered  Class = "warm-throughput-lowered"
	PolicyOnNewReplica     Class = "resource-policy-on-new-replica"
	BackupRemoved          Class = "backup-removed"
	BackupWeakened         Class = "backup-weakened"
)

// Classes lists every hazard class; an acknowledgement naming anything else
// is malformed, so a typo cannot silently acknowledge nothing.
var Classes = []Class{
	MultipleGSIChanges, GSIReplaced, LSIChange, StreamChange, TTLChange,
	TableReplacement, LogicalIDChange, TableTypeChange, ProtectionDropped,
	MultipleReplicaChanges, TableRemoved, PITRDisabled, WarmThroughputLowered,
	PolicyOnNewReplica, BackupRemoved, BackupWeakened,
}

// Known reports whether c is one of Classes.
func (c Class) Known() bool { return slices.Contains(Classes, c) }

// Hazard is one change to a DynamoDB table that CloudFormation rejects or
// that hurts the live table, with the way to ship it safely.
type Hazard struct {
	Class        Class
	Stage, Stack string
	LogicalID    string
	// OldLogicalID is the id before a logical-id change; an acknowledgement
	// may name either, since the reviewer may know the table by its old id.
	OldLogicalID string
	// TableName is the physical name, "(unnamed)" when CloudFormation
	// generates it; for a backup hazard, the vault's, plan's or
	// selection's name.
	TableName string
	Detail    string
	Fix       string
}

func (h Hazard) String() string {
	return fmt.Sprintf("%s/%s %s %s %s: %s; safe way: %s",
		orDash(h.Stage), orDash(h.Stack), h.LogicalID, h.TableName, h.Class, h.Detail, h.Fix)
}

// Change is a DynamoDB change the guard judged safe, listed so that the
// reviewer sees what the guard looked at.
type Change struct {
	Stage, Stack string
	// LogicalID is empty for a stack-level change (a new stack).
	LogicalID string
	Detail    string
}

func (c Change) String() string {
	where := orDash(c.Stage) + "/" + orDash(c.Stack)
	if c.LogicalID != "" {
		where += " " + c.LogicalID
	}
	return where + ": " + c.Detail
}

// Report is the result of comparing two sets of templates.
type Report struct {
	// Stacks counts the stacks present on either side; Tables counts the
	// DynamoDB tables on either side, a matched pair once.
	Stacks, Tables int
	Hazards        []Hazard
	Changes        []Change
}

// Summary is the one line printed after the hazards. The safe changes of one
// table are grouped so that a busy change set stays readable.
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s, %d %s compared, ", r.Stacks, plural(r.Stacks, "stack"), r.Tables, plural(r.Tables, "table"))
	if len(r.Changes) == 0 {
		b.WriteString("no safe changes")
		return b.String()
	}
	fmt.Fprintf(&b, "%d safe %s (", len(r.Changes), plural(len(r.Changes), "change"))
	for i, c := range r.Changes {
		same := i > 0 && r.Changes[i-1].Stage == c.Stage && r.Changes[i-1].Stack == c.Stack && r.Changes[i-1].LogicalID == c.LogicalID
		switch {
		case same:
			b.WriteString(", " + c.Detail)
		case i > 0:
			b.WriteString("; " + c.String())
		default:
			b.WriteString(c.String())
		}
	}
	b.WriteString(")")
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// count spells small counts out because the fixes read as instructions
// ("split into two deploys").
func count(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}
