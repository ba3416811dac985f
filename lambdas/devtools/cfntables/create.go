package cfntables

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
		if _, err := client.CreateTable(ctx, &in); err != nil {
			var inUse *types.ResourceInUseException
			if !opts.KeepExisting || !errors.As(err, &inUse) {
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
