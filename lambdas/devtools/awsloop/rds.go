package awsloop

import (
	"net/http"
	"sync"
)

// RDS statuses the fake uses.
const (
	DBAvailable = "available"
	DBStopped   = "stopped"
	DBStarting  = "starting"
	DBStopping  = "stopping"
)

// RDS is a fake RDS with Start/StopDBInstance and Start/StopDBCluster. As
// in RDS, starting needs "stopped" and stopping needs "available"
// (InvalidDBInstanceState / InvalidDBClusterStateFault otherwise); unknown
// identifiers are DBInstanceNotFound / DBClusterNotFoundFault (404). The
// response reports starting/stopping; the next call sees the state
// settled.
type RDS struct {
	*Server
	mu            sync.Mutex
	instances     map[string]string
	clusters      map[string]string
	acceptUnknown bool
}

// NewRDS returns an RDS fake (not started) without databases.
func NewRDS() *RDS {
	r := &RDS{Server: NewServer(RDSService), instances: map[string]string{}, clusters: map[string]string{}}
	r.Handle("StartDBInstance", func(c *Call) (any, error) { return r.change(c, false, DBStopped, DBStarting, DBAvailable) })
	r.Handle("StopDBInstance", func(c *Call) (any, error) { return r.change(c, false, DBAvailable, DBStopping, DBStopped) })
	r.Handle("StartDBCluster", func(c *Call) (any, error) { return r.change(c, true, DBStopped, DBStarting, DBAvailable) })
	r.Handle("StopDBCluster", func(c *Call) (any, error) { return r.change(c, true, DBAvailable, DBStopping, DBStopped) })
	return r
}

// AddInstance adds (or resets) a DB instance in status.
func (r *RDS) AddInstance(id, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.instances[id] = status
}

// AddCluster adds (or resets) a DB cluster in status.
func (r *RDS) AddCluster(id, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clusters[id] = status
}

// AcceptUnknown makes unknown identifiers exist, in the state the call
// needs, on first use (local development).
func (r *RDS) AcceptUnknown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acceptUnknown = true
}

// InstanceStatus returns a DB instance's status, "" if unknown.
func (r *RDS) InstanceStatus(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.instances[id]
}

// ClusterStatus returns a DB cluster's status, "" if unknown.
func (r *RDS) ClusterStatus(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.clusters[id]
}

type dbInstanceResult struct {
	DBInstance struct {
		DBInstanceIdentifier string `xml:"DBInstanceIdentifier"`
		DBInstanceArn        string `xml:"DBInstanceArn"`
		DBInstanceStatus     string `xml:"DBInstanceStatus"`
		Engine               string `xml:"Engine"`
	} `xml:"DBInstance"`
}

type dbClusterResult struct {
	DBCluster struct {
		DBClusterIdentifier string `xml:"DBClusterIdentifier"`
		DBClusterArn        string `xml:"DBClusterArn"`
		Status              string `xml:"Status"`
		Engine              string `xml:"Engine"`
	} `xml:"DBCluster"`
}

func (r *RDS) change(c *Call, cluster bool, from, during, to string) (any, error) {
	param, kind, states := "DBInstanceIdentifier", "db", r.instances
	if cluster {
		param, kind, states = "DBClusterIdentifier", "cluster", r.clusters
	}
	id := c.Get(param)
	if id == "" {
		return nil, ClientError("MissingParameter", "The request must contain the parameter %s", param)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := states[id]
	if !ok && r.acceptUnknown {
		st, ok = from, true
	}
	switch {
	case !ok && cluster:
		return nil, &Error{Status: http.StatusNotFound, Code: "DBClusterNotFoundFault", Message: "DBCluster " + id + " not found."}
	case !ok:
		return nil, &Error{Status: http.StatusNotFound, Code: "DBInstanceNotFound", Message: "DBInstance " + id + " not found."}
	case st != from && cluster:
		return nil, ClientError("InvalidDBClusterStateFault", "DbCluster %s is in %s state but expected it to be one of %s.", id, st, from)
	case st != from:
		return nil, ClientError("InvalidDBInstanceState", "Instance %s is not in %s state.", id, from)
	}
	states[id] = to
	arn := "arn:aws:rds:" + c.Region + ":000000000000:" + kind + ":" + id
	if cluster {
		var out dbClusterResult
		out.DBCluster.DBClusterIdentifier, out.DBCluster.DBClusterArn, out.DBCluster.Status, out.DBCluster.Engine = id, arn, during, "aurora-postgresql"
		return out, nil
	}
	var out dbInstanceResult
	out.DBInstance.DBInstanceIdentifier, out.DBInstance.DBInstanceArn, out.DBInstance.DBInstanceStatus, out.DBInstance.Engine = id, arn, during, "postgres"
	return out, nil
}
