package cfntables

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Options adjust Create.
type Options struct {
	// Prefix and Suffix are added to every table name, so that tests
	// sharing one DynamoDB Local do not see each other's tables.
	Prefix, Suffix string
	// KeepExisting treats an existing table of the same name as created
	// instead of failing, for re-runs against a long-lived endpoint. The
	// existing table's schema is not compared.
	KeepExisting bool
}

// TableName is the name Create gives tbl.
func (o Options) TableName(tbl Table) string {
	name := tbl.Name
	if name == "" {
		name = tbl.LogicalID
	}
	return o.Prefix + name + o.Suffix
}

// CreateTableAPI is the part of *dynamodb.Client that Create uses.
type CreateTableAPI interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// Create creates the tables of t, waits until they are active, enables TTL
// where the template does, and returns logical id → table name.
func Create(ctx context.Context, client CreateTableAPI, t *Template, opts Options) (map[string]string, error) {
	tables, err := t.Tables()
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(tables))
	for _, tbl := range tables {
		name := opts.TableName(tbl)
		in := tbl.Input
		in.TableName = aws.String(name)
		start, attempts := time.Now(), 0
		if _, err := client.CreateTable(ctx, &in, countAttempts(&attempts)); err != nil {
			var inUse *types.ResourceInUseException
			retried := attempts > 1 && createdSince(ctx, client, name, start)
			if !errors.As(err, &inUse) || !(opts.KeepExisting || retried) {
				return names, fmt.Errorf("cfntables: create table %s (%s): %w", name, tbl.LogicalID, err)
			}
		}
		w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
			return names, fmt.Errorf("cfntables: wait for table %s: %w", name, err)
		}
		if tbl.TTL != nil {
			if _, err := client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name), TimeToLiveSpecification: tbl.TTL}); err != nil && !opts.KeepExisting {
				return names, fmt.Errorf("cfntables: enable TTL on %s: %w", name, err)
			}
		}
		names[tbl.LogicalID] = name
	}
	return names, nil
}

// countAttempts counts the attempts the SDK's retryer makes of one call
// into n: a middleware after the retry step runs once per attempt.
func countAttempts(n *int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("cfntablesAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					*n++
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		})
	}
}

// createdSince tells whether table name was created at start or later. A
// CreateTable whose answer was lost (a slow DynamoDB Local on a loaded
// machine) and that the SDK retried finds the table its first attempt
// made: a success, not a table someone else left.
func createdSince(ctx context.Context, client CreateTableAPI, name string, start time.Time) bool {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil || out.Table == nil || out.Table.CreationDateTime == nil {
		return false
	}
	// DynamoDB Local keeps whole seconds.
	return !out.Table.CreationDateTime.Before(start.Truncate(time.Second))
}

// Delete deletes the named tables, ignoring tables that are already gone.
func Delete(ctx context.Context, client interface {
	DeleteTable(context.Context, *dynamodb.DeleteTableInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error)
}, names map[string]string) error {
	var errs []error
	for _, name := range names {
		_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &nf) {
			errs = append(errs, fmt.Errorf("cfntables: delete %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
