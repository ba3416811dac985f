// Package nucleus holds the two tables of the Nucleus platform (design
// document 001): the single-table app store (accounts, schedules, targeted
// resources) and the audit log with its global timeline.
package nucleus

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

func gsi1() table.Index {
	return table.Index{
		Name:         contract.IndexGSI1,
		PartitionKey: table.Key{Name: contract.AttrGSI1PK, Type: table.String},
		SortKey:      &table.Key{Name: contract.AttrGSI1SK, Type: table.String},
		Projection:   table.ProjectAll,
	}
}

// AppSpec is the documented schema of NucleusAppTable.
func AppSpec() table.Spec {
	return table.Spec{
		Service:      contract.Name,
		BaseName:     contract.AppTableBaseName,
		PartitionKey: table.Key{Name: contract.AttrPK, Type: table.String},
		SortKey:      &table.Key{Name: contract.AttrSK, Type: table.String},
		Indexes:      []table.Index{gsi1()},
		TTLAttribute: contract.AttrExpireAt,
	}
}

// AuditSpec is the documented schema of NucleusAuditTable.
func AuditSpec() table.Spec {
	return table.Spec{
		Service:      contract.Name,
		BaseName:     contract.AuditTableBaseName,
		PartitionKey: table.Key{Name: contract.AttrPK, Type: table.String},
		SortKey:      &table.Key{Name: contract.AttrSK, Type: table.String},
		Indexes:      []table.Index{gsi1()},
		TTLAttribute: contract.AttrExpireAt,
	}
}

// NewAppTable creates NucleusAppTable for props.Stage.
func NewAppTable(scope constructs.Construct, id string, props table.Props) (*table.Table, error) {
	return table.New(scope, id, AppSpec(), props)
}

// NewAuditTable creates NucleusAuditTable for props.Stage.
func NewAuditTable(scope constructs.Construct, id string, props table.Props) (*table.Table, error) {
	return table.New(scope, id, AuditSpec(), props)
}

// ImportAppTable references the deployed NucleusAppTable of a stage.
func ImportAppTable(scope constructs.Construct, id string, stage table.Stage, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, AppSpec(), stage, opts)
}

// ImportAuditTable references the deployed NucleusAuditTable of a stage.
func ImportAuditTable(scope constructs.Construct, id string, stage table.Stage, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, AuditSpec(), stage, opts)
}
