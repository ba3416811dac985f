package lifecycle_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/lifecycle"
	"github.com/stretchr/testify/assert"
)

type door string

var errRefused = errors.New("doors: invalid status transition")

var doors = &lifecycle.Machine[door]{
	Service: "doors",
	Subject: "door",
	Order:   []door{"open", "closed", "locked", "gone"},
	Next: map[door][]door{
		"open":   {"closed", "gone"},
		"closed": {"open", "locked"},
		"locked": {"closed"},
	},
	ErrInvalid: errRefused,
}

func (door) Lifecycle() *lifecycle.Machine[door] { return doors }

// ticket is a machine without a Subject: its messages name no item.
type ticket string

var tickets = &lifecycle.Machine[ticket]{Service: "tickets", Order: []ticket{"open", "closed"},
	Next: map[ticket][]ticket{"open": {"closed"}}, ErrInvalid: errRefused}

func (ticket) Lifecycle() *lifecycle.Machine[ticket] { return tickets }

func TestMachine(t *testing.T) {
	tests := []struct {
		to   door
		want []door
	}{
		{"open", []door{"closed"}},
		{"closed", []door{"open", "locked"}},
		{"gone", []door{"open"}},
		{"ajar", nil},
	}
	for _, tt := range tests {
		got := doors.Sources(tt.to)
		if len(tt.want) == 0 { // slices.Equal's reading: nil and empty alike
			assert.Empty(t, got, "Sources(%s)", tt.to)
		} else {
			assert.Equal(t, tt.want, got, "Sources(%s)", tt.to)
		}
	}
	assert.True(t, doors.Can("open", "gone"), "Can disagrees with Next: open to gone")
	assert.False(t, doors.Can("gone", "open"), "Can disagrees with Next: gone to open")
	assert.False(t, doors.Can("open", "open"), "Can disagrees with Next: open to open")
	assert.True(t, doors.Valid("locked"), "Valid disagrees with Order: locked")
	assert.False(t, doors.Valid("ajar"), "Valid disagrees with Order: ajar")
	assert.False(t, doors.Valid(""), "Valid disagrees with Order: the empty status")
}

func TestTransitionError(t *testing.T) {
	tests := []struct {
		name              string
		err               interface{ api.Coded }
		wantText, wantMsg string
	}{
		{"allowed elsewhere", &lifecycle.TransitionError[door]{From: "locked", To: "open"},
			"doors: cannot change status from locked to open; allowed from locked: closed",
			`door "d1" is locked: cannot change status from locked to open; allowed from locked: closed`},
		{"final", &lifecycle.TransitionError[door]{From: "gone", To: "open"},
			"doors: cannot change status from gone to open: gone is final",
			`door "d1" is gone: cannot change status from gone to open: gone is final`},
		{"no subject", &lifecycle.TransitionError[ticket]{From: "closed", To: "open"},
			"tickets: cannot change status from closed to open: closed is final",
			"cannot change status from closed to open: closed is final"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualError(t, tt.err, tt.wantText, "Error()")
			e := api.ErrorFor(api.About(fmt.Errorf("set: %w", tt.err), "d1"))
			assert.Equal(t, 409, e.Status, "answer's status")
			assert.Equal(t, api.CodeConflict, e.Code, "answer's code")
			assert.Equal(t, tt.wantMsg, e.Message, "answer's message")
			assert.ErrorIs(t, tt.err, errRefused, "does not match the machine's ErrInvalid")
		})
	}
}

// A refused change is written as a plain literal; the status type names the
// machine, which words the error and its 409 answer.
func ExampleTransitionError() {
	err := fmt.Errorf("set status: %w", &lifecycle.TransitionError[door]{From: "locked", To: "open"})
	fmt.Println(errors.Is(err, errRefused))
	fmt.Println(api.ErrorFor(api.About(err, "front")).Message)
	// Output:
	// true
	// door "front" is locked: cannot change status from locked to open; allowed from locked: closed
}
