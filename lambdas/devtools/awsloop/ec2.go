package awsloop

import (
	"regexp"
	"sync"
)

// EC2 instance states, as the API names them.
const (
	InstancePending    = "pending"
	InstanceRunning    = "running"
	InstanceStopping   = "stopping"
	InstanceStopped    = "stopped"
	InstanceTerminated = "terminated"
)

var instanceStateCodes = map[string]int{InstancePending: 0, InstanceRunning: 16, "shutting-down": 32,
	InstanceTerminated: 48, InstanceStopping: 64, InstanceStopped: 80}

// EC2 is a fake EC2 with StartInstances and StopInstances over a set of
// instances. A call naming an unknown or malformed id fails as a whole, as
// EC2 does (InvalidInstanceID.NotFound / .Malformed); a terminated
// instance is IncorrectInstanceState. Transitions settle at once: the
// response says pending/stopping, the next call sees running/stopped.
type EC2 struct {
	*Server
	mu            sync.Mutex
	instances     map[string]string
	acceptUnknown bool
}

// NewEC2 returns an EC2 fake (not started) without instances.
func NewEC2() *EC2 {
	e := &EC2{Server: NewServer(EC2Service), instances: map[string]string{}}
	e.Handle("StartInstances", func(c *Call) (any, error) { return e.change(c, InstanceRunning) })
	e.Handle("StopInstances", func(c *Call) (any, error) { return e.change(c, InstanceStopped) })
	return e
}

// AddInstance adds (or resets) an instance in state.
func (e *EC2) AddInstance(id, state string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.instances[id] = state
}

// AcceptUnknown makes unknown (well-formed) instance ids exist on first
// use, for local development.
func (e *EC2) AcceptUnknown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.acceptUnknown = true
}

// State returns an instance's state, "" if unknown.
func (e *EC2) State(id string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.instances[id]
}

var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}(?:[0-9a-f]{9})?$`)

type instanceState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type instanceChange struct {
	InstanceID    string        `xml:"instanceId"`
	CurrentState  instanceState `xml:"currentState"`
	PreviousState instanceState `xml:"previousState"`
}

type instancesResult struct {
	Instances []instanceChange `xml:"instancesSet>item"`
}

func state(name string) instanceState { return instanceState{instanceStateCodes[name], name} }

func (e *EC2) change(c *Call, target string) (any, error) {
	ids := c.List("InstanceId")
	if len(ids) == 0 {
		return nil, ClientError("MissingParameter", "The request must contain the parameter InstanceId")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range ids {
		if !instanceIDPattern.MatchString(id) {
			return nil, ClientError("InvalidInstanceID.Malformed", "Invalid id: %q", id)
		}
		st, ok := e.instances[id]
		switch {
		case !ok && !e.acceptUnknown:
			return nil, ClientError("InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
		case st == InstanceTerminated:
			return nil, ClientError("IncorrectInstanceState", "The instance '%s' is not in a state from which it can be started or stopped.", id)
		}
	}
	if c.Get("DryRun") == "true" {
		return nil, ClientError("DryRunOperation", "Request would have succeeded, but DryRun flag is set.")
	}
	var out instancesResult
	for _, id := range ids {
		prev, ok := e.instances[id]
		if !ok {
			prev = InstanceStopped
			if target == InstanceStopped {
				prev = InstanceRunning
			}
		}
		cur := target
		if prev != target {
			cur = map[string]string{InstanceRunning: InstancePending, InstanceStopped: InstanceStopping}[target]
		}
		e.instances[id] = target
		out.Instances = append(out.Instances, instanceChange{InstanceID: id, CurrentState: state(cur), PreviousState: state(prev)})
	}
	return out, nil
}
