// Command stak-stream is the Lambda function consuming the Stak inbox
// table's DynamoDB stream (provided.al2023, built as bootstrap with -tags
// lambda.norpc). Its event source mapping must enable
// ReportBatchItemFailures: the handler reports failed records instead of
// failing the batch (docs/schemas/stak.md, "Stream consumer").
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/dynastack/dynastack/lambdas/platform/logx"
	"github.com/dynastack/dynastack/lambdas/services/stak"
)

func main() {
	log := logx.New(os.Stdout, slog.LevelInfo).With("service", "stak-stream")
	logx.SetDefault(log)
	c, err := stak.NewConsumer(context.Background(), os.Getenv)
	if err != nil {
		log.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(c.Handle)
}
