package ddbrecord

import (
	"cmp"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Access is one IAM permission a DynamoDB request needs: an action on a
// table, or on one of its indexes (resource `<table ARN>/index/<Index>`).
type Access struct {
	Action string `json:"action"` // "dynamodb:GetItem", …
	Table  string `json:"table"`
	Index  string `json:"index,omitempty"`
}

// Needs returns the permissions the request whose input is params needs,
// as IAM evaluates them (DynamoDB's "actions, resources and condition
// keys"): a transaction needs each item's own action on its table
// (dynamodb:PutItem, UpdateItem, DeleteItem, ConditionCheckItem; GetItem for
// TransactGetItems), batches their own action on every table they name, a
// Query or Scan of an index the action on the index. Any other operation
// needs its own action on the table its input names, if any. op is the
// operation name (awsmiddleware.GetOperationName); it decides only for
// inputs this function does not know.
func Needs(op string, params any) []Access {
	name := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	one := func(action string, table *string) []Access {
		return []Access{{Action: "dynamodb:" + action, Table: name(table)}}
	}
	var out []Access
	switch v := params.(type) {
	case *dynamodb.GetItemInput:
		return one("GetItem", v.TableName)
	case *dynamodb.PutItemInput:
		return one("PutItem", v.TableName)
	case *dynamodb.UpdateItemInput:
		return one("UpdateItem", v.TableName)
	case *dynamodb.DeleteItemInput:
		return one("DeleteItem", v.TableName)
	case *dynamodb.QueryInput:
		return []Access{{Action: "dynamodb:Query", Table: name(v.TableName), Index: name(v.IndexName)}}
	case *dynamodb.ScanInput:
		return []Access{{Action: "dynamodb:Scan", Table: name(v.TableName), Index: name(v.IndexName)}}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range v.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, one("PutItem", it.Put.TableName)...)
			case it.Update != nil:
				out = append(out, one("UpdateItem", it.Update.TableName)...)
			case it.Delete != nil:
				out = append(out, one("DeleteItem", it.Delete.TableName)...)
			case it.ConditionCheck != nil:
				out = append(out, one("ConditionCheckItem", it.ConditionCheck.TableName)...)
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range v.TransactItems {
			if it.Get != nil {
				out = append(out, one("GetItem", it.Get.TableName)...)
			}
		}
	case *dynamodb.BatchGetItemInput:
		for t := range v.RequestItems {
			out = append(out, Access{Action: "dynamodb:BatchGetItem", Table: t})
		}
	case *dynamodb.BatchWriteItemInput:
		for t := range v.RequestItems {
			out = append(out, Access{Action: "dynamodb:BatchWriteItem", Table: t})
		}
	default:
		return []Access{{Action: "dynamodb:" + op, Table: tableName(params)}}
	}
	slices.SortFunc(out, func(a, b Access) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Action, b.Action))
	})
	return slices.Compact(out)
}

// tableName is the TableName field of an input the switch above does not
// know (DescribeTable, UpdateTimeToLive, …), "" when it has none.
func tableName(params any) string {
	v := reflect.ValueOf(params)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	f := v.Elem().FieldByName("TableName")
	if !f.IsValid() {
		return ""
	}
	if s, ok := f.Interface().(*string); ok && s != nil {
		return *s
	}
	return ""
}
