// Package agenticpm holds the single table of AgenticPM (design document
// 004): projects, artefacts, events, escalations, agent actions, checkpoints
// and configuration, with GSI1 for the cross-project views.
package agenticpm

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/table"
)

// Names fixed by the design document.
const (
	Service       = "agenticpm"
	TableBaseName = "AgenticPM"

	AttrPK     = "PK"
	AttrSK     = "SK"
	AttrGSI1PK = "GSI1PK"
	AttrGSI1SK = "GSI1SK"
	AttrTTL    = "TTL"

	// IndexGSI1 serves pending escalations, projects by status, events by
	// date and the hold queue (held actions by due time, and the outbox of
	// released ones).
	IndexGSI1 = "GSI1"

	// EnvTableName carries the physical table name to the Lambda.
	EnvTableName = "AGENTICPM_TABLE"
)

// Spec is the documented schema. The document enables point-in-time recovery
// without naming a stage, so it is required in every stage.
func Spec() table.Spec {
	return table.Spec{
		Service:      Service,
		BaseName:     TableBaseName,
		PartitionKey: table.Key{Name: AttrPK, Type: table.String},
		SortKey:      &table.Key{Name: AttrSK, Type: table.String},
		Indexes: []table.Index{{
			Name:         IndexGSI1,
			PartitionKey: table.Key{Name: AttrGSI1PK, Type: table.String},
			SortKey:      &table.Key{Name: AttrGSI1SK, Type: table.String},
			Projection:   table.ProjectAll,
		}},
		TTLAttribute:               AttrTTL,
		RequirePointInTimeRecovery: true,
	}
}

// NewTable creates the AgenticPM table for props.Stage.
func NewTable(scope constructs.Construct, id string, props table.Props) (*table.Table, error) {
	return table.New(scope, id, Spec(), props)
}

// ImportTable references the deployed AgenticPM table of a stage.
func ImportTable(scope constructs.Construct, id string, stage table.Stage, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, Spec(), stage, opts)
}
