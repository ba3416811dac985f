package rezagent

// The bindings of rez_agent's functions live in the packages of what only
// they link: publisher.APIFunction and publisher.SchedulerFunction
// (services/rezagent/publisher, with the SNS client they publish with)
// and processor.Function (services/rezagent/processor, with the SSM
// client it reads its ntfy token with), so that no bootstrap links the
// other functions' clients; cmd/<name> runs one in Lambda, and
// lambdas/services lists all three for the local runner and the tests.
