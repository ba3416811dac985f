// Package catalog lists every dynastack service's contract, in design
// document order. Like the contracts it links no CDK code: the stacks, the
// local runner and the tests all enumerate services from here.
package catalog

import (
	agenticpm "github.com/dynastack/dynastack/constructs/agenticpm/contract"
	itsm "github.com/dynastack/dynastack/constructs/itsm/contract"
	nucleus "github.com/dynastack/dynastack/constructs/nucleus/contract"
	rezagent "github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/service"
	stak "github.com/dynastack/dynastack/constructs/stak/contract"
)

// Services lists the contracts in document order (000 to 004).
func Services() []service.Contract {
	return []service.Contract{rezagent.Service, nucleus.Service, stak.Service, itsm.Service, agenticpm.Service}
}

// Functions lists every function of every service, in service order.
func Functions() []service.Function {
	var fns []service.Function
	for _, s := range Services() {
		fns = append(fns, s.Functions...)
	}
	return fns
}

// Function returns the function named name, of any service.
func Function(name string) (service.Function, bool) {
	for _, s := range Services() {
		if f, ok := s.Function(name); ok {
			return f, true
		}
	}
	return service.Function{}, false
}

// ServiceOf returns the contract of the service the function named name
// belongs to.
func ServiceOf(name string) (service.Contract, bool) {
	for _, s := range Services() {
		if _, ok := s.Function(name); ok {
			return s, true
		}
	}
	return service.Contract{}, false
}
