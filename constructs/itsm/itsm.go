// Package itsm holds the table of the ITSM ticket PoC (design document 003):
// one ticket per item, listed per caller through CallerIdIndex. Its names
// come from the service's contract (constructs/itsm/contract), where a
// team that imports this table finds the index and variable names too.
package itsm

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/itsm/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

// TicketsSpec is the documented schema of the tickets table.
func TicketsSpec() table.Spec {
	return table.Spec{
		Service:      contract.Name,
		BaseName:     contract.TableBaseName,
		PartitionKey: table.Key{Name: contract.AttrTicketID, Type: table.String},
		Indexes: []table.Index{{
			Name:         contract.IndexCallerID,
			PartitionKey: table.Key{Name: contract.AttrCallerID, Type: table.String},
			SortKey:      &table.Key{Name: contract.AttrCreatedAt, Type: table.String},
			Projection:   table.ProjectAll,
		}},
		TTLAttribute: contract.AttrExpiresAt,
	}
}

// NewTicketsTable creates the tickets table for props.Stage.
func NewTicketsTable(scope constructs.Construct, id string, props table.Props) (*table.Table, error) {
	return table.New(scope, id, TicketsSpec(), props)
}

// ImportTicketsTable references the deployed tickets table of a stage.
func ImportTicketsTable(scope constructs.Construct, id string, stage table.Stage, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, TicketsSpec(), stage, opts)
}
