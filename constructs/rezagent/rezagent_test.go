package rezagent_test

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
	"github.com/dynastack/dynastack/constructs/cdktest"
	"github.com/dynastack/dynastack/constructs/rezagent"
	"github.com/dynastack/dynastack/constructs/table"
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
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range cdktest.JSON(t, stack)["Resources"].(map[string]any) {
			p := r.(map[string]any)["Properties"].(map[string]any)
			for _, g := range p["GlobalSecondaryIndexes"].([]any) {
				names = append(names, g.(map[string]any)["IndexName"].(string))
			}
		}
		got := strings.Join(names, ",")
		want := "stage-created_date-index,status-created_date-index"
		if on {
			want += ",message_type-created_date-index"
		}
		if got != want {
			t.Errorf("MessageTypeIndex=%v: indexes %s, want %s", on, got, want)
		}
		if len(tb.IndexArns()) != len(names) {
			t.Errorf("MessageTypeIndex=%v: grants name %d indexes, table has %d", on, len(tb.IndexArns()), len(names))
		}
	}
}
