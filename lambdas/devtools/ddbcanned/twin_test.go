package ddbcanned

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONShape: a body decoded into its shape encodes back to the same
// bytes (fields in order, numbers with their digits), and a list whose
// objects differ gets the union of their fields.
func TestJSONShape(t *testing.T) {
	for _, body := range []string{
		`{"caller_id":"u1","count":3,"ratio":1.5,"big":123456789012345678901234567890,"ok":true,"none":null,"tags":["a","b"],"nested":{"z":1,"a":"x"},"items":[{"id":"1","n":2},{"id":"2","n":3}],"empty":[]}`,
		`{"text":"caf\u00e9 <b>"}`,
	} {
		typ := jsonShape([]byte(body))
		v := reflect.New(typ)
		require.NoError(t, json.Unmarshal([]byte(body), v.Interface()))
		out, err := json.Marshal(v.Elem().Interface())
		require.NoError(t, err)
		var a, b any
		_ = json.Unmarshal([]byte(body), &a)
		_ = json.Unmarshal(out, &b)
		assert.Equal(t, a, b, "%s came back as %s", body, out)
	}
	typ := jsonShape([]byte(`{"items":[{"a":1},{"b":"x"}]}`))
	f := typ.Field(0).Type.Elem()
	assert.Equal(t, 2, f.NumField(), "union of a list's objects: %v", f)
	assert.Nil(t, jsonShape(nil), "no body has no shape")
	assert.Nil(t, jsonShape([]byte("not json")), "not JSON has no shape")
}

// TestItemType: an item unmarshalled into its shape marshals back to the
// same attribute values, so the twin can send what it marshals.
func TestItemType(t *testing.T) {
	item := map[string]types.AttributeValue{
		"pk":    &types.AttributeValueMemberS{Value: "TICKET#1"},
		"n":     &types.AttributeValueMemberN{Value: "42"},
		"f":     &types.AttributeValueMemberN{Value: "1.5"},
		"huge":  &types.AttributeValueMemberN{Value: "12345678901234567890123456789"},
		"ok":    &types.AttributeValueMemberBOOL{Value: true},
		"gone":  &types.AttributeValueMemberNULL{Value: true},
		"list":  &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"t": &types.AttributeValueMemberS{Value: "x"}}}}},
		"inner": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: "v"}}},
	}
	v := reflect.New(itemType([]map[string]types.AttributeValue{item}))
	require.NoError(t, attributevalue.UnmarshalMap(item, v.Interface()))
	again, err := attributevalue.MarshalMap(v.Elem().Interface())
	require.NoError(t, err)
	assert.Equal(t, item, again, "marshalled back")
}

// TestNewTwin: the maps of an input that marshal back are marshalled
// per run; the answer's items get their shape; the response body its.
func TestNewTwin(t *testing.T) {
	key := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "1"}}
	calls := []Call{{Operation: "GetItem", Input: &dynamodb.GetItemInput{Key: key},
		Output: &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "1"}, "n": &types.AttributeValueMemberN{Value: "2"}}}}}
	tw, err := NewTwin([]byte(`{"a":1}`), calls, []byte(`{"id":"1","n":2}`+"\n"))
	require.NoError(t, err)
	assert.NotNil(t, tw.reqType, "twin request type")
	require.Len(t, tw.calls, 1, "twin calls")
	assert.Len(t, tw.calls[0].slots, 1, "twin call slots")
	assert.Len(t, tw.calls[0].items, 1, "twin call items")
	assert.Zero(t, tw.Captured, "twin Captured")
	assert.Equal(t, tw.HandlerRespBytes, tw.RespBytes, "response bytes against the handler's")
	// The captured input is a copy: the handler reusing its input (a
	// paginator) does not change it.
	key["id"] = &types.AttributeValueMemberS{Value: "2"}
	assert.Equal(t, "1", tw.calls[0].input.(*dynamodb.GetItemInput).Key["id"].(*types.AttributeValueMemberS).Value, "captured key changed with the handler's")
}

// TestConcurrentReplay: a tape recorded with requests in flight together
// answers each request with the recorded answer to the request it
// resembles, whatever the order.
func TestConcurrentReplay(t *testing.T) {
	tr := Play(Tape{concurrent: true, exchanges: []exchange{
		{target: "Q", status: 200, body: []byte("queued"), strs: quoted([]byte(`{":s":{"S":"queued"},"TableName":"t"}`))},
		{target: "Q", status: 200, body: []byte("failed"), strs: quoted([]byte(`{":s":{"S":"failed"},"TableName":"t"}`))},
	}})
	for _, want := range []string{"failed", "queued", "queued", "failed"} {
		resp, err := tr.Do(post("Q", `{"TableName":"t",":s":{"S":"`+want+`"}}`))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		assert.Equal(t, want, string(b), "request for %s", want)
	}
	assert.NoError(t, tr.laps(2))
}

func post(target, body string) *http.Request {
	req, _ := http.NewRequest("POST", "http://dynamodb.local/", strings.NewReader(body))
	req.Header.Set("X-Amz-Target", target)
	return req
}
