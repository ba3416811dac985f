package fn

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
)

// Constructor builds what a function runs from its environment: os.Getenv
// in Lambda, the template's environment in the local runner and tests,
// which also pass options for the DynamoDB client (call recording).
type Constructor[T any] func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (T, error)

// Binding is one function of a service contract with its constructor.
//
// Services hand out bindings from functions, not package variables: a
// binding refers to its constructor, and a variable's would be linked into
// every binary of the package (the stream consumer would carry the whole
// HTTP API), where a function's is linked only into the main that calls it.
type Binding struct {
	// Function is the function's contract.
	Function service.Function
	build    func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (any, error)
	// start runs the Lambda loop of the function's kind; each kind's
	// binder sets it, so a main links only its own kind's runtime.
	start func(v any, log *slog.Logger)
}

func bind[T any](f service.Function, want service.Kind, build Constructor[T], start func(T, *slog.Logger)) Binding {
	if f.Kind != want {
		// A programming error: a main makes its binding at start and the
		// services test makes every one, so neither gets past it.
		panic(fmt.Sprintf("fn: function %s is of kind %q in its contract, bound as %q", f.Name, f.Kind, want))
	}
	return Binding{
		Function: f,
		build: func(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (any, error) {
			return build(ctx, getenv, opts...)
		},
		start: func(v any, log *slog.Logger) { start(v.(T), log) },
	}
}

// HTTP binds an HTTP function to its handler's constructor.
func HTTP(f service.Function, build Constructor[http.Handler]) Binding {
	return bind(f, service.HTTP, build, func(h http.Handler, _ *slog.Logger) { StartHTTP(h) })
}

// Schedule binds a scheduled function to its job's constructor.
func Schedule(f service.Function, build Constructor[Job]) Binding {
	return bind(f, service.Schedule, build, func(job Job, log *slog.Logger) { lambda.Start(JobHandler(job, log)) })
}

// Queue binds an SQS-driven function to its consumer's constructor.
func Queue(f service.Function, build Constructor[QueueConsumer]) Binding {
	return bind(f, service.Queue, build, func(c QueueConsumer, _ *slog.Logger) { lambda.Start(c.Handle) })
}

// Stream binds a DynamoDB stream function to its consumer's constructor.
func Stream(f service.Function, build Constructor[StreamConsumer]) Binding {
	return bind(f, service.Stream, build, func(c StreamConsumer, _ *slog.Logger) { lambda.Start(c.Handle) })
}

// Build constructs what the function runs; its type follows the kind:
// http.Handler, Job, QueueConsumer or StreamConsumer.
func (b Binding) Build(ctx context.Context, getenv func(string) string, opts ...ddb.Option) (any, error) {
	return b.build(ctx, getenv, opts...)
}

// Main is the whole main of every function: JSON logs on stdout, what the
// function runs built once per execution environment (outside the
// invocation, so warm invocations reuse its clients and connections), then
// the Lambda loop of its kind. A configuration error is logged and exits 1,
// which Lambda reports as a failed init.
func Main(b Binding) {
	log := logx.New(os.Stdout, slog.LevelInfo).With("service", b.Function.Name)
	logx.SetDefault(log)
	v, err := b.Build(context.Background(), os.Getenv)
	if err != nil {
		log.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	b.start(v, log)
}
