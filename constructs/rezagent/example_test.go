package rezagent_test

import (
	"fmt"

	"github.com/dynastack/dynastack/constructs/rezagent"
	"github.com/dynastack/dynastack/constructs/table"
)

// The message type index is opt-in; the document defers it.
func ExampleMessagesSpec() {
	fmt.Println(rezagent.MessagesSpec(false).IndexNames())
	fmt.Println(rezagent.MessagesSpec(true).IndexNames())
	fmt.Println(rezagent.MessagesSpec(false).PhysicalName(table.Prod))
	// Output:
	// [stage-created_date-index status-created_date-index]
	// [stage-created_date-index status-created_date-index message_type-created_date-index]
	// rez-agent-messages-prod
}
