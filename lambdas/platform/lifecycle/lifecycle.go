// Package lifecycle is a status state machine and the error of a refused
// change, shared by services whose items move through statuses (rezagent's
// messages, itsm's tickets). A refused change is answered with 409 conflict
// by platform/api without a per-service mapping.
package lifecycle

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/dynastack/dynastack/lambdas/platform/api"
)

// Machine is the allowed status changes of one kind of item.
type Machine[S ~string] struct {
	// Service prefixes error texts (rezagent: …), as the service's own
	// errors are prefixed.
	Service string
	// Subject names the item in a client message ("message" makes
	// `message "<id>" is completed: …`); empty leaves item and status out.
	Subject string
	// Order is every status in lifecycle order.
	Order []S
	// Next lists the statuses each status may change to; a final status
	// has none.
	Next map[S][]S
	// ErrInvalid is the service's sentinel a TransitionError matches with
	// errors.Is.
	ErrInvalid error
}

// Can reports whether an item in from may move to to.
func (m *Machine[S]) Can(from, to S) bool { return slices.Contains(m.Next[from], to) }

// Sources lists the statuses from which to can be reached, in lifecycle
// order: a conditional update requires the stored status to be one of them.
func (m *Machine[S]) Sources(to S) []S {
	var out []S
	for _, from := range m.Order {
		if m.Can(from, to) {
			out = append(out, from)
		}
	}
	return out
}

// Valid reports whether s is a status of the machine.
func (m *Machine[S]) Valid(s S) bool { return slices.Contains(m.Order, s) }

// Status is a status type that names its machine, so that a TransitionError
// can be written as a plain {From, To} literal.
type Status[S ~string] interface {
	~string
	Lifecycle() *Machine[S]
}

// TransitionError is a refused status change; From is the status the item
// had when the write was refused.
type TransitionError[S Status[S]] struct {
	From, To S
}

func (e *TransitionError[S]) Error() string {
	m := e.From.Lifecycle()
	prefix := m.Service + ": cannot change status"
	allowed := make([]string, 0, len(m.Next[e.From]))
	for _, s := range m.Next[e.From] {
		allowed = append(allowed, string(s))
	}
	if len(allowed) == 0 {
		return fmt.Sprintf("%s from %s to %s: %s is final", prefix, e.From, e.To, e.From)
	}
	return fmt.Sprintf("%s from %s to %s; allowed from %s: %s", prefix, e.From, e.To, e.From, strings.Join(allowed, ", "))
}

// Is matches the machine's ErrInvalid.
func (e *TransitionError[S]) Is(target error) bool { return target == e.From.Lifecycle().ErrInvalid }

// HTTPStatus implements api.Coded.
func (e *TransitionError[S]) HTTPStatus() int { return http.StatusConflict }

// ErrorCode implements api.Coded.
func (e *TransitionError[S]) ErrorCode() string { return api.CodeConflict }

// PublicMessage implements api.Coded: the error without the service prefix,
// after the item and its current status when the machine names a Subject.
func (e *TransitionError[S]) PublicMessage(id string, _ error) string {
	m := e.From.Lifecycle()
	msg := strings.TrimPrefix(e.Error(), m.Service+": ")
	if m.Subject == "" {
		return msg
	}
	return fmt.Sprintf("%s %q is %s: %s", m.Subject, id, e.From, msg)
}
