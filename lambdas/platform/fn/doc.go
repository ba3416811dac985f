// Package fn is the function shape: the one way a dynastack Lambda
// function is built and started, whatever invokes it. A service binds each
// function of its contract to the constructor of what it runs; a
// function's main is then one statement:
//
//	func main() { fn.Main(itsm.APIFunction()) }
//
// and the local runner and the tests build the same bindings from a
// template's environment instead of the process's.
//
// What belongs here: the bindings and Main; the preamble every
// constructor runs ([New], [Required], [Common]: configuration from a
// getenv, the DynamoDB client, the handler's defaults); and one file per
// kind of trigger with the types its function implements and the Lambda
// loop that calls it: HTTP behind API Gateway ([StartHTTP]), EventBridge
// Scheduler jobs ([Job], [ScheduleEvent]), SQS consumers
// ([QueueConsumer], [QueueBatch]) and DynamoDB stream consumers
// ([StreamConsumer], [StreamItem]). What a request does once it is routed
// is platform/api's; how it reaches DynamoDB is platform/ddb's.
package fn
