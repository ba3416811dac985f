package fn_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/dynastack/dynastack/lambdas/platform/fn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestItem(t *testing.T) {
	img := map[string]events.DynamoDBAttributeValue{
		"s": events.NewStringAttribute("x"), "n": events.NewNumberAttribute("1.5"), "b": events.NewBinaryAttribute([]byte{0, 1, 255}),
		"t": events.NewBooleanAttribute(true), "z": events.NewNullAttribute(), "ss": events.NewStringSetAttribute([]string{"a"}),
		"ns": events.NewNumberSetAttribute([]string{"1", "2"}), "bs": events.NewBinarySetAttribute([][]byte{{1}, {2}}),
		"l": events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewNumberAttribute("2")}),
		"m": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"k": events.NewStringAttribute("v")}),
	}
	got, err := fn.StreamItem(img)
	require.NoError(t, err)
	want := map[string]types.AttributeValue{
		"s": s("x"), "n": &types.AttributeValueMemberN{Value: "1.5"}, "b": &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"t": &types.AttributeValueMemberBOOL{Value: true}, "z": &types.AttributeValueMemberNULL{Value: true},
		"ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "2"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": s("v")}},
	}
	assert.Equal(t, want, got, "Item")
}

// An image as Lambda delivers it: the raw event JSON, decoded by
// aws-lambda-go, then converted.
func TestItemFromLambdaJSON(t *testing.T) {
	raw := `{"Records":[{"eventName":"REMOVE","dynamodb":{"OldImage":{"pk":{"S":"t#a"},"n":{"N":"12345678901234567890.5"},"b":{"B":"AAH/"},"m":{"M":{"l":{"L":[{"NULL":true},{"BOOL":false}]}}}}}}]}`
	var ev events.DynamoDBEvent
	require.NoError(t, json.Unmarshal([]byte(raw), &ev))
	require.Len(t, ev.Records, 1)
	got, err := fn.StreamItem(ev.Records[0].Change.OldImage)
	require.NoError(t, err)
	want := map[string]types.AttributeValue{
		"pk": s("t#a"), "n": &types.AttributeValueMemberN{Value: "12345678901234567890.5"},
		"b": &types.AttributeValueMemberB{Value: []byte{0, 1, 255}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberNULL{Value: true}, &types.AttributeValueMemberBOOL{Value: false}}}}},
	}
	assert.Equal(t, want, got, "Item")
	img, err := fn.StreamItem(nil)
	assert.Nil(t, img, "Item(nil)")
	assert.NoError(t, err, "Item(nil)")
}
