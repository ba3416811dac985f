// Package agenticpm holds the single table of AgenticPM (design document
// 004): projects, artefacts, events, escalations, agent actions, checkpoints
// and configuration, with GSI1 for the cross-project views.
package agenticpm

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/agenticpm/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

// Spec is the documented schema. The document enables point-in-time recovery
// without naming a stage, so it is required in every stage.
func Spec() table.Spec {
	return table.Spec{
		Service:      contract.Name,
		BaseName:     contract.TableBaseName,
		PartitionKey: table.Key{Name: contract.AttrPK, Type: table.String},
		SortKey:      &table.Key{Name: contract.AttrSK, Type: table.String},
		Indexes: []table.Index{{
			Name:         contract.IndexGSI1,
			PartitionKey: table.Key{Name: contract.AttrGSI1PK, Type: table.String},
			SortKey:      &table.Key{Name: contract.AttrGSI1SK, Type: table.String},
			Projection:   table.ProjectAll,
		}},
		TTLAttribute:               contract.AttrTTL,
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
