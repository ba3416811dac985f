package rezagent_test

import (
	"os"
	"testing"

	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/rezagent"
	"github.com/dynastack/dynastack/constructs/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

func TestMessageTypeIndex(t *testing.T) {
	for _, on := range []bool{false, true} {
		stack := cdktest.NewStack(t)
		tb, err := rezagent.NewMessagesTable(stack, "Messages", rezagent.MessagesProps{Props: table.Props{Stage: table.Stg}, MessageTypeIndex: on})
		require.NoError(t, err)
		var names []string
		for _, r := range cdktest.JSON(t, stack)["Resources"].(map[string]any) {
			p := r.(map[string]any)["Properties"].(map[string]any)
			for _, g := range p["GlobalSecondaryIndexes"].([]any) {
				names = append(names, g.(map[string]any)["IndexName"].(string))
			}
		}
		want := []string{"stage-created_date-index", "status-created_date-index"}
		if on {
			want = append(want, "message_type-created_date-index")
		}
		assert.Equal(t, want, names, "MessageTypeIndex=%v: indexes", on)
		assert.Len(t, tb.IndexArns(), len(names), "MessageTypeIndex=%v: grants name as many indexes as the table has", on)
	}
}
