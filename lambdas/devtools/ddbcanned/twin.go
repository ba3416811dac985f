package ddbcanned

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Call is one DynamoDB call a handler made, as the SDK received it.
type Call struct {
	Operation string
	// Input is a deep copy of the typed input (*dynamodb.GetItemInput, …)
	// taken at the Initialize step, before the SDK serializes it.
	Input any
	// Output is the typed result; nil when the call failed.
	Output any
	Failed bool
}

// Capture records the typed inputs and outputs of the calls of every
// client it instruments. It is safe for concurrent use.
type Capture struct {
	mu    sync.Mutex
	calls []Call
}

// Instrument is a dynamodb.Options function.
func (c *Capture) Instrument(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("ddbcanned.Capture", c.handle), middleware.After)
	})
}

func (c *Capture) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	input := deepCopy(reflect.ValueOf(in.Parameters)).Interface()
	out, md, err := next.HandleInitialize(ctx, in)
	call := Call{Operation: awsmiddleware.GetOperationName(ctx), Input: input, Failed: err != nil}
	if err == nil {
		call.Output = out.Result
	}
	c.mu.Lock()
	c.calls = append(c.calls, call)
	c.mu.Unlock()
	return out, md, err
}

// Reset forgets the calls captured so far.
func (c *Capture) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = nil
}

// Calls are the calls captured since the last Reset, in the order they
// returned.
func (c *Capture) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Call(nil), c.calls...)
}

// deepCopy copies pointers, structs (exported fields: the SDK's types
// have no others that carry data), slices, maps and interfaces, so that a
// handler reusing an input (a paginator moving ExclusiveStartKey) does not
// change what was captured.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Struct:
		s := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			if s.Field(i).CanSet() {
				s.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return s
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(deepCopy(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return m
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	}
	return v
}

// Twin is the generic raw SDK twin of one recorded handler operation: the
// byte work a minimal hand-written handler of the same operation would do,
// and nothing else. Per run it
//
//   - decodes the request body bytes with encoding/json (json.Unmarshal)
//     into a struct of the body's shape (its fields, types and order, made
//     with reflect.StructOf from the recorded body);
//   - for each DynamoDB call the handler made, in order: marshals each
//     attribute map of the input the handler built (an item, a key,
//     expression values, in transactions and batches too) with
//     attributevalue.MarshalMap from a struct of that map's shape, and
//     sends the handler's typed input with those maps through the SDK
//     client (which serializes, signs, sends to the canned transport and
//     deserializes the same answer bytes the handler got); a call that
//     failed for the handler must fail the same way;
//   - unmarshals every item the answers return (Item, Items, Attributes,
//     Responses) with attributevalue into structs of their shape;
//   - encodes a struct of the response body's shape with encoding/json
//     (json.Marshal): the handler's response bytes, or bytes of the same
//     length.
//
// It does not route, build an http.Request or a response writer, check
// anything about the input, build expression strings (they are the
// handler's, as constants), make ids, cursors or timestamps, or log.
type Twin struct {
	body    []byte
	reqType reflect.Type // nil: no body to decode
	calls   []twinCall
	resp    any // nil: no body to encode
	// Captured counts the attribute maps sent as the handler built them,
	// unmarshalled: their shape did not marshal back to the same map.
	Captured int
	// RespBytes is the length of the body the twin encodes, beside
	// HandlerRespBytes, the handler's.
	RespBytes, HandlerRespBytes int
}

type twinCall struct {
	input  any
	failed bool
	slots  []slot
	items  []reflect.Type // per item group of the answer: the struct of one item
}

// slot is an attribute map of an input and the value it is marshalled from.
type slot struct {
	field *map[string]types.AttributeValue
	value any
}

// NewTwin builds the twin of an operation from its request body, the
// calls the handler made and its response body.
func NewTwin(reqBody []byte, calls []Call, respBody []byte) (*Twin, error) {
	// A handler writing with json.Encoder ends its body with a newline.
	tw := &Twin{body: reqBody, HandlerRespBytes: len(bytes.TrimSuffix(respBody, []byte("\n")))}
	if t := jsonShape(reqBody); t != nil {
		tw.reqType = t
	}
	for _, c := range calls {
		tc := twinCall{input: deepCopy(reflect.ValueOf(c.Input)).Interface(), failed: c.Failed}
		for _, m := range inputMaps(tc.input) {
			t := itemType([]map[string]types.AttributeValue{*m})
			v := reflect.New(t)
			if err := attributevalue.UnmarshalMap(*m, v.Interface()); err == nil {
				if again, err := attributevalue.MarshalMap(v.Elem().Interface()); err == nil && reflect.DeepEqual(again, *m) {
					tc.slots = append(tc.slots, slot{field: m, value: v.Elem().Interface()})
					continue
				}
			}
			tw.Captured++
		}
		if !c.Failed {
			for _, group := range outputItems(c.Output) {
				tc.items = append(tc.items, itemType(group))
			}
		}
		tw.calls = append(tw.calls, tc)
	}
	if t := jsonShape(respBody); t != nil {
		v := reflect.New(t)
		if err := json.Unmarshal(respBody, v.Interface()); err != nil {
			return nil, fmt.Errorf("ddbcanned: response body into its shape: %w", err)
		}
		tw.resp = v.Elem().Interface()
		b, err := json.Marshal(tw.resp)
		if err != nil {
			return nil, err
		}
		tw.RespBytes = len(b)
	}
	return tw, nil
}

// Op is the twin's operation on client c.
func (tw *Twin) Op(c *dynamodb.Client) func() error {
	ctx := context.Background()
	return func() error {
		if tw.reqType != nil {
			if err := json.Unmarshal(tw.body, reflect.New(tw.reqType).Interface()); err != nil {
				return err
			}
		}
		for _, call := range tw.calls {
			for _, s := range call.slots {
				m, err := attributevalue.MarshalMap(s.value)
				if err != nil {
					return err
				}
				*s.field = m
			}
			out, err := invoke(ctx, c, call.input)
			if (err != nil) != call.failed {
				return fmt.Errorf("ddbcanned: %T: error %v; the handler's call failed: %v", call.input, err, call.failed)
			}
			if err != nil {
				continue
			}
			groups := outputItems(out)
			if len(groups) != len(call.items) {
				return fmt.Errorf("ddbcanned: %T answered %d item groups, recorded %d", out, len(groups), len(call.items))
			}
			for i, g := range groups {
				p := reflect.New(reflect.SliceOf(call.items[i]))
				if err := attributevalue.UnmarshalListOfMaps(g, p.Interface()); err != nil {
					return err
				}
			}
		}
		if tw.resp != nil {
			if _, err := json.Marshal(tw.resp); err != nil {
				return err
			}
		}
		return nil
	}
}

// invoke sends a typed input through c.
func invoke(ctx context.Context, c *dynamodb.Client, in any) (any, error) {
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		return c.GetItem(ctx, in)
	case *dynamodb.PutItemInput:
		return c.PutItem(ctx, in)
	case *dynamodb.UpdateItemInput:
		return c.UpdateItem(ctx, in)
	case *dynamodb.DeleteItemInput:
		return c.DeleteItem(ctx, in)
	case *dynamodb.QueryInput:
		return c.Query(ctx, in)
	case *dynamodb.ScanInput:
		return c.Scan(ctx, in)
	case *dynamodb.BatchGetItemInput:
		return c.BatchGetItem(ctx, in)
	case *dynamodb.BatchWriteItemInput:
		return c.BatchWriteItem(ctx, in)
	case *dynamodb.TransactGetItemsInput:
		return c.TransactGetItems(ctx, in)
	case *dynamodb.TransactWriteItemsInput:
		return c.TransactWriteItems(ctx, in)
	}
	return nil, fmt.Errorf("ddbcanned: no twin for %T", in)
}

// inputMaps are the attribute maps of an input a handler builds from its
// values: items, keys and expression values.
func inputMaps(in any) []*map[string]types.AttributeValue {
	var out []*map[string]types.AttributeValue
	add := func(ms ...*map[string]types.AttributeValue) {
		for _, m := range ms {
			if len(*m) > 0 {
				out = append(out, m)
			}
		}
	}
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		add(&in.Key)
	case *dynamodb.PutItemInput:
		add(&in.Item, &in.ExpressionAttributeValues)
	case *dynamodb.UpdateItemInput:
		add(&in.Key, &in.ExpressionAttributeValues)
	case *dynamodb.DeleteItemInput:
		add(&in.Key, &in.ExpressionAttributeValues)
	case *dynamodb.QueryInput:
		add(&in.ExpressionAttributeValues, &in.ExclusiveStartKey)
	case *dynamodb.ScanInput:
		add(&in.ExpressionAttributeValues, &in.ExclusiveStartKey)
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for i := range ka.Keys {
				add(&ka.Keys[i])
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, ws := range in.RequestItems {
			for _, w := range ws {
				if w.PutRequest != nil {
					add(&w.PutRequest.Item)
				}
				if w.DeleteRequest != nil {
					add(&w.DeleteRequest.Key)
				}
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, g := range in.TransactItems {
			if g.Get != nil {
				add(&g.Get.Key)
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, w := range in.TransactItems {
			switch {
			case w.Put != nil:
				add(&w.Put.Item, &w.Put.ExpressionAttributeValues)
			case w.Update != nil:
				add(&w.Update.Key, &w.Update.ExpressionAttributeValues)
			case w.Delete != nil:
				add(&w.Delete.Key, &w.Delete.ExpressionAttributeValues)
			case w.ConditionCheck != nil:
				add(&w.ConditionCheck.Key, &w.ConditionCheck.ExpressionAttributeValues)
			}
		}
	}
	return out
}

// outputItems are the items an answer returns, in groups a handler
// unmarshals together (one item, or a page).
func outputItems(out any) [][]map[string]types.AttributeValue {
	var groups [][]map[string]types.AttributeValue
	one := func(m map[string]types.AttributeValue) {
		if len(m) > 0 {
			groups = append(groups, []map[string]types.AttributeValue{m})
		}
	}
	switch out := out.(type) {
	case *dynamodb.GetItemOutput:
		one(out.Item)
	case *dynamodb.PutItemOutput:
		one(out.Attributes)
	case *dynamodb.UpdateItemOutput:
		one(out.Attributes)
	case *dynamodb.DeleteItemOutput:
		one(out.Attributes)
	case *dynamodb.QueryOutput:
		if len(out.Items) > 0 {
			groups = append(groups, out.Items)
		}
	case *dynamodb.ScanOutput:
		if len(out.Items) > 0 {
			groups = append(groups, out.Items)
		}
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			if len(items) > 0 {
				groups = append(groups, items)
			}
		}
	case *dynamodb.TransactGetItemsOutput:
		for _, r := range out.Responses {
			one(r.Item)
		}
	}
	return groups
}

// itemType is a struct with one field per attribute the items have (the
// union, in name order), each of the Go type attributevalue gives that
// attribute's value back as: string, a number type that keeps its digits,
// []byte, bool, a pointer for NULL, a slice or nested struct for L and M.
func itemType(items []map[string]types.AttributeValue) reflect.Type {
	byName := map[string]reflect.Type{}
	var names []string
	for _, item := range items {
		for k, v := range item {
			t := avType(v)
			if prev, ok := byName[k]; !ok {
				names = append(names, k)
				byName[k] = t
			} else if prev != t {
				byName[k] = anyType
			}
		}
	}
	slices.Sort(names)
	fields := make([]reflect.StructField, 0, len(names))
	for i, k := range names {
		if !tagSafe(k) {
			return reflect.TypeFor[map[string]any]()
		}
		fields = append(fields, reflect.StructField{Name: "F" + strconv.Itoa(i), Type: byName[k], Tag: reflect.StructTag(`dynamodbav:"` + k + `"`)})
	}
	return reflect.StructOf(fields)
}

var anyType = reflect.TypeFor[any]()

func avType(v types.AttributeValue) reflect.Type {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return reflect.TypeFor[string]()
	case *types.AttributeValueMemberN:
		return numberType(v.Value, reflect.TypeFor[attributevalue.Number]())
	case *types.AttributeValueMemberB:
		return reflect.TypeFor[[]byte]()
	case *types.AttributeValueMemberBOOL:
		return reflect.TypeFor[bool]()
	case *types.AttributeValueMemberNULL:
		return reflect.TypeFor[*bool]()
	case *types.AttributeValueMemberM:
		return itemType([]map[string]types.AttributeValue{v.Value})
	case *types.AttributeValueMemberL:
		if len(v.Value) == 0 {
			return reflect.TypeFor[[]any]()
		}
		var maps []map[string]types.AttributeValue
		elem := avType(v.Value[0])
		for _, e := range v.Value {
			if m, ok := e.(*types.AttributeValueMemberM); ok {
				maps = append(maps, m.Value)
			}
			if avType(e) != elem {
				elem = anyType
			}
		}
		if len(maps) == len(v.Value) {
			elem = itemType(maps)
		}
		return reflect.SliceOf(elem)
	}
	return anyType
}

// numberType is int64 for a number that an int64 gives back digit for
// digit, float64 for one a float64 does, and exact otherwise.
func numberType(s string, exact reflect.Type) reflect.Type {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(i, 10) == s {
		return reflect.TypeFor[int64]()
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == s {
		return reflect.TypeFor[float64]()
	}
	return exact
}

// jsonShape is the Go type of a JSON text: a struct per object, fields in
// the text's order (encoding/json writes them back in that order), nil for
// an empty text or one that is not JSON.
func jsonShape(b []byte) reflect.Type {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := readOrdered(dec)
	if err != nil {
		return nil
	}
	return shapeOf(v)
}

// object is a JSON object with its keys in order.
type object struct {
	keys   []string
	values []any
}

func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.keys, o.values = append(o.keys, k.(string)), append(o.values, v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := readOrdered(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return tok, nil
}

func shapeOf(v any) reflect.Type {
	switch v := v.(type) {
	case string:
		return reflect.TypeFor[string]()
	case bool:
		return reflect.TypeFor[bool]()
	case json.Number:
		return numberType(string(v), reflect.TypeFor[json.Number]())
	case nil:
		return reflect.TypeFor[*string]()
	case *object:
		return objectShape([]*object{v})
	case []any:
		if len(v) == 0 {
			return reflect.TypeFor[[]any]()
		}
		var objs []*object
		elem := shapeOf(v[0])
		for _, e := range v {
			if o, ok := e.(*object); ok {
				objs = append(objs, o)
			}
			if shapeOf(e) != elem {
				elem = anyType
			}
		}
		if len(objs) == len(v) {
			elem = objectShape(objs)
		}
		return reflect.SliceOf(elem)
	}
	return anyType
}

// objectShape is the struct of objects: the union of their keys, in the
// order they first appear.
func objectShape(objs []*object) reflect.Type {
	byName := map[string]reflect.Type{}
	var names []string
	for _, o := range objs {
		for i, k := range o.keys {
			t := shapeOf(o.values[i])
			if prev, ok := byName[k]; !ok {
				names = append(names, k)
				byName[k] = t
			} else if prev != t {
				byName[k] = anyType
			}
		}
	}
	fields := make([]reflect.StructField, 0, len(names))
	for i, k := range names {
		if !tagSafe(k) {
			return reflect.TypeFor[map[string]any]()
		}
		fields = append(fields, reflect.StructField{Name: "F" + strconv.Itoa(i), Type: byName[k], Tag: reflect.StructTag(`json:"` + k + `"`)})
	}
	return reflect.StructOf(fields)
}

// tagSafe is whether a name can be a struct tag's name.
func tagSafe(k string) bool {
	return k != "" && k != "-" && !strings.ContainsAny(k, "\",\\` ")
}
