package ddbguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dynastack/dynastack/infra/assembly"
)

// Ack acknowledges one hazard on purpose. Stage and Stack may be "*"; the
// logical id and class must be exact, so an acknowledgement never covers
// more than the reviewer looked at.
type Ack struct {
	Stage     string `json:"stage"`
	Stack     string `json:"stack"`
	LogicalID string `json:"logicalId"`
	Hazard    Class  `json:"hazard"`
	Reason    string `json:"reason"`
	// Source says where the acknowledgement came from (file and entry, or
	// the flag), for the stale warning.
	Source string `json:"-"`
}

func (a Ack) String() string {
	return a.Stage + "/" + a.Stack + "/" + a.LogicalID + "/" + string(a.Hazard)
}

// Matches reports whether a covers h. A logical-id change may be
// acknowledged under the old or the new id.
func (a Ack) Matches(h Hazard) bool {
	return (a.Stage == "*" || a.Stage == h.Stage) &&
		(a.Stack == "*" || a.Stack == h.Stack) &&
		(a.LogicalID == h.LogicalID || (h.OldLogicalID != "" && a.LogicalID == h.OldLogicalID)) &&
		a.Hazard == h.Class
}

func (a Ack) validate() error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"stage", a.Stage}, {"stack", a.Stack}, {"logicalId", a.LogicalID}, {"hazard", string(a.Hazard)},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if a.LogicalID == "*" {
		return fmt.Errorf("logicalId must name one resource, not *")
	}
	if !a.Hazard.Known() {
		return fmt.Errorf("unknown hazard %q (known: %s)", a.Hazard, classList())
	}
	// The reason is what a later reader of the file needs; without one an
	// acknowledgement is a silenced alarm.
	if strings.TrimSpace(a.Reason) == "" {
		return fmt.Errorf("%s has no reason: say why the hazard is acceptable", a)
	}
	return nil
}

func classList() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// ParseAcks reads a reviewed acknowledgement file: a JSON array of Ack.
// Unknown fields are refused so that a misspelt key ("logical_id") is an
// error, not an entry that silently matches nothing.
func ParseAcks(path string, data []byte) ([]Ack, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var acks []Ack
	if err := dec.Decode(&acks); err != nil {
		return nil, malformed("%s: not a JSON array of acknowledgements {stage, stack, logicalId, hazard, reason}: %v", path, err)
	}
	for i := range acks {
		acks[i].Source = fmt.Sprintf("%s entry %d", path, i+1)
		if err := acks[i].validate(); err != nil {
			return nil, malformed("%s: %v", acks[i].Source, err)
		}
	}
	return acks, nil
}

// LoadAcks reads an acknowledgement file (see ParseAcks).
func LoadAcks(path string) ([]Ack, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, malformed("%s: cannot read: %v", path, assembly.UnwrapPathError(err))
	}
	return ParseAcks(path, data)
}

// ParseAck parses the command-line form
// <stage>/<stack>/<logicalId>/<class>=<reason>.
func ParseAck(s string) (Ack, error) {
	target, reason, _ := strings.Cut(s, "=")
	parts := strings.Split(target, "/")
	if len(parts) != 4 {
		return Ack{}, malformed("--ack-hazard %q: want <stage>/<stack>/<logicalId>/<class>=<reason>", s)
	}
	a := Ack{Stage: parts[0], Stack: parts[1], LogicalID: parts[2], Hazard: Class(parts[3]), Reason: reason, Source: "--ack-hazard"}
	if err := a.validate(); err != nil {
		return Ack{}, malformed("--ack-hazard %q: %v", s, err)
	}
	return a, nil
}

// Acked is a hazard with the acknowledgement that let it pass.
type Acked struct {
	Hazard
	Ack Ack
}

func (a Acked) String() string {
	return fmt.Sprintf("%s/%s %s %s %s: %s; reason: %s",
		orDash(a.Stage), orDash(a.Stack), a.LogicalID, a.TableName, a.Class, a.Detail, a.Ack.Reason)
}

// Outcome is a report after acknowledgements: what still blocks the merge,
// what passed on purpose, and which acknowledgements matched nothing.
type Outcome struct {
	Open  []Hazard
	Acked []Acked
	Stale []Ack
}

// Failed reports whether an unacknowledged hazard remains.
func (o Outcome) Failed() bool { return len(o.Open) > 0 }

// Acknowledge applies acks to the report's hazards. The first matching
// acknowledgement wins; one acknowledgement may cover several hazards (the
// same class on one table in several indexes, or "*" stages).
func (r Report) Acknowledge(acks []Ack) Outcome {
	var out Outcome
	used := make([]bool, len(acks))
	for _, h := range r.Hazards {
		acked := false
		for i, a := range acks {
			if a.Matches(h) {
				out.Acked = append(out.Acked, Acked{Hazard: h, Ack: a})
				used[i], acked = true, true
				break
			}
		}
		if !acked {
			out.Open = append(out.Open, h)
		}
	}
	for i, a := range acks {
		if !used[i] {
			out.Stale = append(out.Stale, a)
		}
	}
	return out
}
