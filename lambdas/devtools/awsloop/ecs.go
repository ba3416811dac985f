package awsloop

import (
	"strings"
	"sync"
)

// ECS is a fake ECS with UpdateService (desiredCount) and DescribeServices
// over a set of services keyed by cluster and service name. Clusters and
// services may be named or given by ARN, as the API allows; "default" is
// the cluster when none is given. Unknown clusters are
// ClusterNotFoundException, unknown services ServiceNotFoundException (in
// DescribeServices: a MISSING failure).
type ECS struct {
	*Server
	mu            sync.Mutex
	services      map[string]*ECSServiceState // cluster/service
	acceptUnknown bool
}

// ECSServiceState is what the fake keeps per service.
type ECSServiceState struct {
	Cluster, Service string
	DesiredCount     int32
}

// NewECS returns an ECS fake (not started) without services.
func NewECS() *ECS {
	e := &ECS{Server: NewServer(ECSService), services: map[string]*ECSServiceState{}}
	e.Handle("UpdateService", e.updateService)
	e.Handle("DescribeServices", e.describeServices)
	return e
}

// AddService adds (or resets) a service with desiredCount.
func (e *ECS) AddService(cluster, service string, desiredCount int32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.services[cluster+"/"+service] = &ECSServiceState{cluster, service, desiredCount}
}

// AcceptUnknown makes unknown services exist (desired count 1) on first
// use, for local development.
func (e *ECS) AcceptUnknown() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.acceptUnknown = true
}

// DesiredCount returns a service's desired count and whether it exists.
func (e *ECS) DesiredCount(cluster, service string) (int32, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.services[cluster+"/"+service]
	if !ok {
		return 0, false
	}
	return s.DesiredCount, true
}

// shortName reads a name or the last path segment of an ARN.
func shortName(s string) string {
	if strings.HasPrefix(s, "arn:") {
		return s[strings.LastIndex(s, "/")+1:]
	}
	return s
}

// lookup finds a service; the caller holds e.mu.
func (e *ECS) lookup(region, cluster, service string, create bool) (*ECSServiceState, bool, bool) {
	cluster, service = shortName(cluster), shortName(service)
	if cluster == "" {
		cluster = "default"
	}
	known := false
	for _, s := range e.services {
		if s.Cluster == cluster {
			known = true
		}
	}
	s, ok := e.services[cluster+"/"+service]
	if !ok && create && e.acceptUnknown {
		s = &ECSServiceState{cluster, service, 1}
		e.services[cluster+"/"+service] = s
		return s, true, true
	}
	return s, known || e.acceptUnknown, ok
}

type ecsService struct {
	ServiceArn   string `json:"serviceArn"`
	ServiceName  string `json:"serviceName"`
	ClusterArn   string `json:"clusterArn"`
	Status       string `json:"status"`
	DesiredCount int32  `json:"desiredCount"`
	RunningCount int32  `json:"runningCount"`
	PendingCount int32  `json:"pendingCount"`
	LaunchType   string `json:"launchType"`
}

func (s *ECSServiceState) render(region string) ecsService {
	prefix := "arn:aws:ecs:" + region + ":000000000000:"
	return ecsService{ServiceArn: prefix + "service/" + s.Cluster + "/" + s.Service, ServiceName: s.Service,
		ClusterArn: prefix + "cluster/" + s.Cluster, Status: "ACTIVE", DesiredCount: s.DesiredCount, LaunchType: "FARGATE"}
}

func (e *ECS) updateService(c *Call) (any, error) {
	var in struct {
		Cluster      string `json:"cluster"`
		Service      string `json:"service"`
		DesiredCount *int32 `json:"desiredCount"`
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	switch {
	case in.Service == "":
		return nil, ClientError("InvalidParameterException", "service can not be blank.")
	case in.DesiredCount != nil && *in.DesiredCount < 0:
		return nil, ClientError("InvalidParameterException", "desiredCount can not be negative.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s, clusterKnown, ok := e.lookup(c.Region, in.Cluster, in.Service, true)
	switch {
	case !clusterKnown:
		return nil, ClientError("ClusterNotFoundException", "Cluster not found.")
	case !ok:
		return nil, ClientError("ServiceNotFoundException", "Service not found.")
	}
	if in.DesiredCount != nil {
		s.DesiredCount = *in.DesiredCount
	}
	return map[string]any{"service": s.render(c.Region)}, nil
}

func (e *ECS) describeServices(c *Call) (any, error) {
	var in struct {
		Cluster  string   `json:"cluster"`
		Services []string `json:"services"`
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if len(in.Services) == 0 || len(in.Services) > 10 {
		return nil, ClientError("InvalidParameterException", "services must name 1 to 10 services.")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	services, failures := []ecsService{}, []map[string]string{}
	for _, name := range in.Services {
		s, clusterKnown, ok := e.lookup(c.Region, in.Cluster, name, true)
		if !clusterKnown {
			return nil, ClientError("ClusterNotFoundException", "Cluster not found.")
		}
		if !ok {
			failures = append(failures, map[string]string{"arn": name, "reason": "MISSING"})
			continue
		}
		services = append(services, s.render(c.Region))
	}
	return map[string]any{"services": services, "failures": failures}, nil
}
