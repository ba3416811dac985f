// Command agenticpm is the AgenticPM data API Lambda function
// (provided.al2023, built as bootstrap with -tags lambda.norpc).
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/dynastack/dynastack/lambdas/platform/lambdahttp"
	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/agenticpm"
)

func main() {
	log := logx.New(os.Stdout, slog.LevelInfo).With("service", "agenticpm")
	slog.SetDefault(log)
	// Built once per execution environment, outside the handler, so warm
	// invocations reuse the client and its connections.
	h, err := agenticpm.New(context.Background(), os.Getenv)
	if err != nil {
		log.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	lambdahttp.Start(h)
}
