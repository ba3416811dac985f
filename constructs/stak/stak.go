// Package stak holds the single table of the Stak multi-tenant notification
// inbox (design document 002): settings, inbox configs, messages, read
// receipts and counters share one key space.
package stak

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/stak/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

// InboxSpec is the documented schema. The stream carries old images because
// the counters are kept by a consumer of TTL deletions, which only the old
// image describes; new images are kept too so that a future consumer does not
// need a view-type change, which CloudFormation can only do by disabling the
// stream first.
func InboxSpec() table.Spec {
	return table.Spec{
		Service:      contract.Name,
		BaseName:     contract.TableBaseName,
		PartitionKey: table.Key{Name: contract.AttrPK, Type: table.String},
		SortKey:      &table.Key{Name: contract.AttrSK, Type: table.String},
		TTLAttribute: contract.AttrExpiredAt,
		Stream:       table.NewAndOldImages,
	}
}

// NewInboxTable creates the inbox table for props.Stage.
func NewInboxTable(scope constructs.Construct, id string, props table.Props) (*table.Table, error) {
	return table.New(scope, id, InboxSpec(), props)
}

// ImportInboxTable references the deployed inbox table of a stage. Pass
// opts.StreamArn to grant stream reads.
func ImportInboxTable(scope constructs.Construct, id string, stage table.Stage, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, InboxSpec(), stage, opts)
}
