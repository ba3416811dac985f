// Package rezagent holds the messages table of rez_agent (design document
// 000): scheduled and manual notifications, listed by stage and by status.
package rezagent

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/rezagent/contract"
	"github.com/dynastack/dynastack/constructs/table"
)

// MessagesProps configures the messages table.
type MessagesProps struct {
	table.Props
	// MessageTypeIndex adds message_type-created_date-index. The document
	// defers it until there are three or more message types, because every
	// index adds a write per item.
	//
	// Default: false.
	MessageTypeIndex bool
}

// MessagesSpec is the documented schema; withTypeIndex adds the optional index.
func MessagesSpec(withTypeIndex bool) table.Spec {
	createdDate := &table.Key{Name: contract.AttrCreatedDate, Type: table.String}
	s := table.Spec{
		Service:      contract.Name,
		BaseName:     contract.TableBaseName,
		PartitionKey: table.Key{Name: contract.AttrMessageID, Type: table.String},
		Indexes: []table.Index{
			{Name: contract.IndexStageCreatedDate, PartitionKey: table.Key{Name: contract.AttrStage, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll},
			{Name: contract.IndexStatusCreatedDate, PartitionKey: table.Key{Name: contract.AttrStatus, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll},
		},
		TTLAttribute: contract.AttrTTL,
		// Document 000: "Encryption at Rest: AWS-managed KMS key (default)".
		Encryption: table.AWSManaged,
	}
	if withTypeIndex {
		s.Indexes = append(s.Indexes, table.Index{Name: contract.IndexMessageTypeCreatedDate, PartitionKey: table.Key{Name: contract.AttrMessageType, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll})
	}
	return s
}

// NewMessagesTable creates the messages table for props.Stage.
func NewMessagesTable(scope constructs.Construct, id string, props MessagesProps) (*table.Table, error) {
	return table.New(scope, id, MessagesSpec(props.MessageTypeIndex), props.Props)
}

// ImportMessagesTable references the deployed messages table of a stage;
// withTypeIndex says whether that stage deployed the optional index.
func ImportMessagesTable(scope constructs.Construct, id string, stage table.Stage, withTypeIndex bool, opts table.ImportOptions) (*table.Table, error) {
	return table.Import(scope, id, MessagesSpec(withTypeIndex), stage, opts)
}
