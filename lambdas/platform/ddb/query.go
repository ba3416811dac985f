package ddb

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrPastEnd is what a Query's Check returns for a cursor that is valid
// but lies past the end of the range (say below a moving lower bound): the
// page is empty and last, where starting the Query there would be a
// ValidationException.
var ErrPastEnd = errors.New("ddb: cursor past the end of the range")

// Query is one paginated Query of items T whose position travels to the
// client in a cursor over the key struct K, signed for Scope. The cursor's
// wire format is K's JSON, so K is the service's: changing its json tags
// retires the cursors clients hold.
//
// A page ends with its last item, not with DynamoDB's LastEvaluatedKey
// (see Pager), so the key of a GSI position is read from an item: K must
// name the index's key attributes and the table's.
type Query[T, K any] struct {
	// Input is the Query without Limit and ExclusiveStartKey, which each
	// round sets.
	Input *dynamodb.QueryInput
	// Pager bounds and fills the page; Size is the page size.
	Pager Pager
	// Codec signs cursors; Scope names the query (partition, filters,
	// bounds) so that a cursor of one query fails to decode for another.
	Codec *CursorCodec
	Scope string
	// Check vets a decoded cursor before it becomes a start key, since
	// cursors are not secret: ErrInvalidCursor for a key outside the
	// query's range, ErrPastEnd for one after its end. nil accepts any.
	Check func(K) error
	// StartKey makes the ExclusiveStartKey of a position; nil marshals K
	// with attributevalue.
	StartKey func(K) (map[string]types.AttributeValue, error)
	// KeyOf reads the position of an item (or LastEvaluatedKey); nil
	// unmarshals it into K with attributevalue.
	KeyOf func(map[string]types.AttributeValue) (K, error)
}

// Page is one page of T: Items never nil, so it encodes as [], and Next
// the cursor of the next page, "" on the last one.
type Page[T any] struct {
	Items []T
	Next  string
}

// Page reads the page after token ("" for the first). A bad token is
// ErrInvalidCursor; a DynamoDB error is Wrapped.
func (q Query[T, K]) Page(ctx context.Context, client QueryAPI, token string) (*Page[T], error) {
	start, err := q.start(token)
	if errors.Is(err, ErrPastEnd) {
		return &Page[T]{Items: []T{}}, nil
	}
	if err != nil {
		return nil, err
	}
	q.Input.ExclusiveStartKey = start
	read, err := q.Pager.Fill(ctx, client, q.Input)
	if err != nil {
		return nil, Wrap("Query", err)
	}
	page := &Page[T]{Items: []T{}}
	if raw, ok := any(&page.Items).(*[]map[string]types.AttributeValue); ok {
		// Items the caller tells apart by their attributes stay raw.
		*raw = append(*raw, read.Items...)
	} else if err := attributevalue.UnmarshalListOfMaps(read.Items, &page.Items); err != nil {
		return nil, fmt.Errorf("ddb: unmarshal page of %s: %w", q.Scope, err)
	}
	if read.Next == nil {
		return page, nil
	}
	k, err := q.keyOf(read.Next)
	if err != nil {
		return nil, err
	}
	page.Next, err = EncodeCursor(q.Codec, q.Scope, k)
	return page, err
}

// Valid checks token as Page would, without a read: for a query that
// needs none (an empty range) but must still refuse a bad cursor.
func (q Query[T, K]) Valid(token string) error {
	_, err := q.start(token)
	if errors.Is(err, ErrPastEnd) {
		return nil
	}
	return err
}

// All yields every item of in, page after page, for reads that need the
// whole range (counts, executors), not a page of it. Breaking out of the
// loop reads no further page. A failed Query is yielded Wrapped, last.
func All(ctx context.Context, client QueryAPI, in *dynamodb.QueryInput) iter.Seq2[map[string]types.AttributeValue, error] {
	return func(yield func(map[string]types.AttributeValue, error) bool) {
		req := *in
		for {
			out, err := client.Query(ctx, &req)
			if err != nil {
				yield(nil, Wrap("Query", err))
				return
			}
			for _, item := range out.Items {
				if !yield(item, nil) {
					return
				}
			}
			if len(out.LastEvaluatedKey) == 0 {
				return
			}
			req.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
}

func (q Query[T, K]) start(token string) (map[string]types.AttributeValue, error) {
	if token == "" {
		return nil, nil
	}
	k, err := DecodeCursor[K](q.Codec, q.Scope, token)
	if err != nil {
		return nil, err
	}
	if q.Check != nil {
		if err := q.Check(k); err != nil {
			return nil, err
		}
	}
	if q.StartKey != nil {
		return q.StartKey(k)
	}
	av, err := attributevalue.MarshalMap(k)
	if err != nil {
		return nil, fmt.Errorf("ddb: marshal start key: %w", err)
	}
	return av, nil
}

func (q Query[T, K]) keyOf(item map[string]types.AttributeValue) (K, error) {
	if q.KeyOf != nil {
		return q.KeyOf(item)
	}
	var k K
	if err := attributevalue.UnmarshalMap(item, &k); err != nil {
		return k, fmt.Errorf("ddb: unmarshal page key: %w", err)
	}
	return k, nil
}
