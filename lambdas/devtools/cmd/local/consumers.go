package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/dynastack/dynastack/lambdas/devtools/cfntables"
	"github.com/dynastack/dynastack/lambdas/devtools/ddbrecord"
	"github.com/dynastack/dynastack/lambdas/devtools/poller"
	"github.com/dynastack/dynastack/lambdas/platform/streams"
	"github.com/dynastack/dynastack/lambdas/platform/streamsapi"
)

const typeEventSourceMapping = "AWS::Lambda::EventSourceMapping"

// streamSource is what an event source mapping tells the local poller.
type streamSource struct {
	table   string // logical id
	start   poller.Position
	batch   int32
	filters []string // FilterCriteria patterns
}

// sourceOf finds the table whose stream feeds fn: the template's event
// source mapping (EventSourceArn Fn::GetAtt [table, StreamArn]) when there
// is one, otherwise the first table with a stream that fn's environment
// refers to.
func sourceOf(ctx context.Context, t *cfntables.Template, fn cfntables.Function, names map[string]string, client *dynamodb.Client) (streamSource, error) {
	ids := make([]string, 0, len(t.Resources))
	for id := range t.Resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := t.Resources[id]
		if r.Type != typeEventSourceMapping {
			continue
		}
		var p struct {
			FunctionName     json.RawMessage `json:"FunctionName"`
			EventSourceArn   json.RawMessage `json:"EventSourceArn"`
			StartingPosition string          `json:"StartingPosition"`
			BatchSize        int32           `json:"BatchSize"`
			FilterCriteria   struct {
				Filters []struct{ Pattern string } `json:"Filters"`
			} `json:"FilterCriteria"`
		}
		if err := json.Unmarshal(r.Properties, &p); err != nil {
			return streamSource{}, fmt.Errorf("event source mapping %s: %w", id, err)
		}
		var fnRef struct{ Ref string }
		var arn struct {
			GetAtt []string `json:"Fn::GetAtt"`
		}
		if json.Unmarshal(p.FunctionName, &fnRef) != nil || fnRef.Ref != fn.LogicalID ||
			json.Unmarshal(p.EventSourceArn, &arn) != nil || len(arn.GetAtt) != 2 || arn.GetAtt[1] != "StreamArn" {
			continue
		}
		if _, ok := names[arn.GetAtt[0]]; !ok {
			continue
		}
		src := streamSource{table: arn.GetAtt[0], start: poller.Position(p.StartingPosition), batch: p.BatchSize}
		for _, f := range p.FilterCriteria.Filters {
			src.filters = append(src.filters, f.Pattern)
		}
		return src, nil
	}
	keys := make([]string, 0, len(fn.Env))
	for k := range fn.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		id := fn.Env[k].Ref
		name, ok := names[id]
		if !ok {
			continue
		}
		if _, err := poller.StreamARN(ctx, client, name); err == nil {
			return streamSource{table: id}, nil
		}
	}
	return streamSource{}, fmt.Errorf("function %s: no event source mapping and no table with a stream in its environment", fn.LogicalID)
}

// startConsumer builds the consumer of fn and polls its table's stream
// until ctx ends, feeding it the batches Lambda would.
func startConsumer(ctx context.Context, log *slog.Logger, ctor streams.Constructor, t *cfntables.Template, fn cfntables.Function, names map[string]string, client *dynamodb.Client, getenv func(string) string) error {
	src, err := sourceOf(ctx, t, fn, names, client)
	if err != nil {
		return err
	}
	c, err := ctor(ctx, getenv, ddbrecord.ClientOptions(getenv)...)
	if err != nil {
		return err
	}
	arn, err := poller.StreamARN(ctx, client, names[src.table])
	if err != nil {
		return err
	}
	start := poller.Latest
	if src.start == poller.TrimHorizon {
		start = poller.TrimHorizon
	}
	p, err := poller.New(poller.Config{
		Client: streamsapi.NewClient(client), StreamARN: arn, Start: start, BatchSize: src.batch, Filters: src.filters,
		Handler: c.Handle, Logger: log.With("function", fn.LogicalID, "service", fn.Service()),
	})
	if err != nil {
		return err
	}
	if err := p.Sync(ctx); err != nil {
		return err
	}
	go p.Run(ctx, 500*time.Millisecond)
	log.Info("stream consumer started", "service", fn.Service(), "function", fn.LogicalID, "table", names[src.table])
	return nil
}
