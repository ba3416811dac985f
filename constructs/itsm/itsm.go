// Package itsm holds the table of the ITSM ticket PoC (design document 003):
// one ticket per item, listed per caller through CallerIdIndex.
package itsm

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/table"
)

// Names fixed by the design document.
const (
	Service       = "itsm"
	TableBaseName = "poc-itsm-tickets"

	AttrTicketID  = "ticket_id"
	AttrCallerID  = "caller_id"
	AttrCreatedAt = "created_at"

	// IndexCallerID lists a caller's tickets by creation time.
	IndexCallerID = "CallerIdIndex"

	// EnvTableName carries the physical table name to the Lambda.
	EnvTableName = "ITSM_TICKETS_TABLE"
)

// TicketsSpec is the documented schema of the tickets table.
func TicketsSpec() table.Spec {
	return table.Spec{
		Service:      Service,
		BaseName:     TableBaseName,
		PartitionKey: table.Key{Name: AttrTicketID, Type: table.String},
		Indexes: []table.Index{{
			Name:         IndexCallerID,
			PartitionKey: table.Key{Name: AttrCallerID, Type: table.String},
			SortKey:      &table.Key{Name: AttrCreatedAt, Type: table.String},
			Projection:   table.ProjectAll,
		}},
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
