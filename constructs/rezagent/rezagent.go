// Package rezagent holds the messages table of rez_agent (design document
// 000): scheduled and manual notifications, listed by stage and by status.
package rezagent

import (
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/dynastack/dynastack/constructs/table"
)

// Names fixed by the design document.
const (
	Service       = "rezagent"
	TableBaseName = "rez-agent-messages"

	AttrMessageID   = "message_id"
	AttrStage       = "stage"
	AttrStatus      = "status"
	AttrMessageType = "message_type"
	AttrCreatedDate = "created_date"
	AttrTTL         = "ttl"

	IndexStageCreatedDate       = "stage-created_date-index"
	IndexStatusCreatedDate      = "status-created_date-index"
	IndexMessageTypeCreatedDate = "message_type-created_date-index"

	// EnvTableName carries the physical table name to the Lambda.
	EnvTableName = "REZ_AGENT_MESSAGES_TABLE"
	// Pipeline environment (docs/schemas/rezagent.md, "Pipeline"): the
	// topic the API and the scheduler publish to, the ntfy server and
	// topic the processor delivers to, the SSM parameter of its token,
	// the queue's redrive maximum, and the scheduler's republish threshold.
	EnvTopicArn           = "REZ_AGENT_TOPIC_ARN"
	EnvNtfyURL            = "NTFY_URL"
	EnvNtfyTopic          = "NTFY_TOPIC"
	EnvNtfyTokenParameter = "NTFY_TOKEN_PARAMETER"
	EnvMaxReceiveCount    = "REZ_AGENT_MAX_RECEIVE_COUNT"
	EnvRepublishAfter     = "REZ_AGENT_REPUBLISH_AFTER"
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
	createdDate := &table.Key{Name: AttrCreatedDate, Type: table.String}
	s := table.Spec{
		Service:      Service,
		BaseName:     TableBaseName,
		PartitionKey: table.Key{Name: AttrMessageID, Type: table.String},
		Indexes: []table.Index{
			{Name: IndexStageCreatedDate, PartitionKey: table.Key{Name: AttrStage, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll},
			{Name: IndexStatusCreatedDate, PartitionKey: table.Key{Name: AttrStatus, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll},
		},
		TTLAttribute: AttrTTL,
	}
	if withTypeIndex {
		s.Indexes = append(s.Indexes, table.Index{Name: IndexMessageTypeCreatedDate, PartitionKey: table.Key{Name: AttrMessageType, Type: table.String}, SortKey: createdDate, Projection: table.ProjectAll})
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
