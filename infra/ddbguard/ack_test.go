package ddbguard

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoIndexes is a report with one hazard: two GSIs added to prod/itsm.
func twoIndexes(t *testing.T) Report {
	t.Helper()
	r := compareEdited(t, "prod", "itsm", func(_, n tpl) {
		addGSI(n, tickets, "ByStatus", "status")
		addGSI(n, tickets, "ByAssignee", "assignee")
	})
	require.Len(t, r.Hazards, 1, "setup: want one hazard, got:\n%s", lines(r.Hazards))
	return r
}

func TestAcknowledge(t *testing.T) {
	file := func(t *testing.T, content string) []Ack {
		t.Helper()
		path := filepath.Join(t.TempDir(), "ddbguard.ack.json")
		writeFile(t, path, content)
		acks, err := LoadAcks(path)
		require.NoError(t, err)
		return acks
	}
	flag := func(t *testing.T, s string) []Ack {
		t.Helper()
		a, err := ParseAck(s)
		require.NoError(t, err)
		return []Ack{a}
	}
	for _, tc := range []struct {
		name               string
		acks               func(t *testing.T) []Ack
		open, acked, stale int
	}{
		{
			name: "file entry",
			acks: func(t *testing.T) []Ack {
				return file(t, `[{"stage": "prod", "stack": "itsm", "logicalId": "Tickets83B11BB2", "hazard": "multiple-gsi-changes", "reason": "table is empty in prod; both indexes backfill in seconds"}]`)
			},
			acked: 1,
		},
		{
			name: "file entry with wildcard stage and stack",
			acks: func(t *testing.T) []Ack {
				return file(t, `[{"stage": "*", "stack": "*", "logicalId": "Tickets83B11BB2", "hazard": "multiple-gsi-changes", "reason": "empty table"}]`)
			},
			acked: 1,
		},
		{
			name:  "flag",
			acks:  func(t *testing.T) []Ack { return flag(t, "prod/itsm/Tickets83B11BB2/multiple-gsi-changes=empty table") },
			acked: 1,
		},
		{
			name:  "flag for another class is stale",
			acks:  func(t *testing.T) []Ack { return flag(t, "prod/itsm/Tickets83B11BB2/gsi-replaced=not this one") },
			open:  1,
			stale: 1,
		},
		{
			name: "flag for another stage is stale",
			acks: func(t *testing.T) []Ack {
				return flag(t, "stage/itsm/Tickets83B11BB2/multiple-gsi-changes=wrong stage")
			},
			open:  1,
			stale: 1,
		},
		{
			name: "no acknowledgements",
			acks: func(*testing.T) []Ack { return nil },
			open: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := twoIndexes(t).Acknowledge(tc.acks(t))
			require.Equal(t, []int{tc.open, tc.acked, tc.stale}, []int{len(out.Open), len(out.Acked), len(out.Stale)}, "open, acked, stale")
			assert.Equal(t, tc.open > 0, out.Failed(), "Failed()")
			for _, a := range out.Acked {
				assert.NotEmpty(t, a.Ack.Reason, "acked line without its reason: %s", a)
				assert.Contains(t, a.String(), "; reason: "+a.Ack.Reason, "acked line without its reason")
			}
		})
	}
}

func TestAcknowledgeOldLogicalID(t *testing.T) {
	r := compareEdited(t, "prod", "itsm", func(_, n tpl) { renameResource(n, tickets, "TicketsV2A1B2C3D4") })
	a, err := ParseAck("prod/itsm/Tickets83B11BB2/logical-id-change=migrated with cdk import")
	require.NoError(t, err)
	out := r.Acknowledge([]Ack{a})
	assert.False(t, out.Failed(), "old logical id did not acknowledge:\n%s", lines(out.Open))
	assert.Len(t, out.Acked, 1, "old logical id did not acknowledge:\n%s", lines(out.Open))
}

func TestAckMalformed(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"missing reason", `[{"stage": "prod", "stack": "itsm", "logicalId": "Tickets83B11BB2", "hazard": "ttl-change"}]`, "has no reason"},
		{"blank reason", `[{"stage": "prod", "stack": "itsm", "logicalId": "Tickets83B11BB2", "hazard": "ttl-change", "reason": "  "}]`, "has no reason"},
		{"unknown hazard", `[{"stage": "prod", "stack": "itsm", "logicalId": "Tickets83B11BB2", "hazard": "ttl", "reason": "x"}]`, `unknown hazard "ttl"`},
		{"misspelt field", `[{"stage": "prod", "stack": "itsm", "logical_id": "Tickets83B11BB2", "hazard": "ttl-change", "reason": "x"}]`, "logical_id"},
		{"missing logical id", `[{"stage": "prod", "stack": "itsm", "hazard": "ttl-change", "reason": "x"}]`, "missing logicalId"},
		{"wildcard logical id", `[{"stage": "prod", "stack": "itsm", "logicalId": "*", "hazard": "ttl-change", "reason": "x"}]`, "must name one resource"},
		{"not an array", `{"stage": "prod"}`, "not a JSON array"},
		{"invalid JSON", `[{`, "not a JSON array"},
	} {
		t.Run("file/"+tc.name, func(t *testing.T) {
			_, err := ParseAcks("infra/ddbguard.ack.json", []byte(tc.file))
			if assert.ErrorIs(t, err, ErrMalformed) {
				assert.ErrorContains(t, err, tc.want)
				assert.ErrorContains(t, err, "infra/ddbguard.ack.json", "want the error naming the file")
			}
		})
	}
	for _, tc := range []struct{ name, flag, want string }{
		{"missing reason", "prod/itsm/Tickets83B11BB2/ttl-change", "has no reason"},
		{"empty reason", "prod/itsm/Tickets83B11BB2/ttl-change=", "has no reason"},
		{"too few parts", "prod/Tickets83B11BB2/ttl-change=x", "want <stage>/<stack>/<logicalId>/<class>=<reason>"},
		{"unknown hazard", "prod/itsm/Tickets83B11BB2/gsi=x", `unknown hazard "gsi"`},
	} {
		t.Run("flag/"+tc.name, func(t *testing.T) {
			_, err := ParseAck(tc.flag)
			if assert.ErrorIs(t, err, ErrMalformed) {
				assert.ErrorContains(t, err, tc.want)
			}
		})
	}
	t.Run("file/unreadable", func(t *testing.T) {
		_, err := LoadAcks(filepath.Join(t.TempDir(), "missing.json"))
		if assert.ErrorIs(t, err, ErrMalformed) {
			assert.ErrorContains(t, err, "missing.json")
		}
	})
}

func TestClassesAreKebabCase(t *testing.T) {
	seen := map[Class]bool{}
	for _, c := range Classes {
		assert.False(t, seen[c], "class %q: ids must be unique (they are parsed from --ack-hazard)", c)
		assert.Equal(t, strings.ToLower(string(c)), string(c), "class %q: ids must be kebab-case (they are parsed from --ack-hazard)", c)
		assert.False(t, strings.ContainsAny(string(c), " _/="), "class %q: ids must be kebab-case (they are parsed from --ack-hazard)", c)
		seen[c] = true
	}
}
