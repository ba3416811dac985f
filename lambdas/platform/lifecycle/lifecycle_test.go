package lifecycle_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/lifecycle"
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
		if got := doors.Sources(tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("Sources(%s) = %v, want %v", tt.to, got, tt.want)
		}
	}
	if !doors.Can("open", "gone") || doors.Can("gone", "open") || doors.Can("open", "open") {
		t.Error("Can disagrees with Next")
	}
	if !doors.Valid("locked") || doors.Valid("ajar") || doors.Valid("") {
		t.Error("Valid disagrees with Order")
	}
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
			if got := tt.err.Error(); got != tt.wantText {
				t.Errorf("Error() = %q, want %q", got, tt.wantText)
			}
			e := api.ErrorFor(api.About(fmt.Errorf("set: %w", tt.err), "d1"))
			if e.Status != 409 || e.Code != api.CodeConflict || e.Message != tt.wantMsg {
				t.Errorf("answer = %d %s %q, want 409 conflict %q", e.Status, e.Code, e.Message, tt.wantMsg)
			}
			if !errors.Is(tt.err, errRefused) {
				t.Error("does not match the machine's ErrInvalid")
			}
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
