package awsloop

// The services the functions call besides DynamoDB, as the SDK's clients
// of them speak: each written once, here, for its fake and for the tests
// that hold them to the SDK (TestSDKAgainstTheLoopbackServers: the ID is the
// SDK package's ServiceID, and the SDK's own client reaches the server;
// a server refuses a call whose signing name, API version or target
// prefix is not its own). The Query protocols' namespace is the xmlns of
// their answers, which AWS writes with the API version.
var (
	// STSService is AWS Security Token Service (awsQuery): Nucleus's
	// AssumeRole and GetCallerIdentity.
	STSService = Service{ID: "STS", Name: "sts", Protocol: AWSQuery, Version: "2011-06-15",
		XMLNamespace: "https://sts.amazonaws.com/doc/2011-06-15/"}
	// EC2Service is Amazon EC2 (ec2Query): the executor's StartInstances
	// and StopInstances.
	EC2Service = Service{ID: "EC2", Name: "ec2", Protocol: EC2Query, Version: "2016-11-15",
		XMLNamespace: "http://ec2.amazonaws.com/doc/2016-11-15/"}
	// RDSService is Amazon RDS (awsQuery): the executor's Start and Stop
	// of DB instances and clusters.
	RDSService = Service{ID: "RDS", Name: "rds", Protocol: AWSQuery, Version: "2014-10-31",
		XMLNamespace: "http://rds.amazonaws.com/doc/2014-10-31/"}
	// ECSService is Amazon ECS (awsJson1_1): the executor's
	// DescribeServices and UpdateService.
	ECSService = Service{ID: "ECS", Name: "ecs", Protocol: AWSJSON11, TargetPrefix: "AmazonEC2ContainerServiceV20141113"}
	// SNSService is Amazon SNS (awsQuery): rez_agent's Publish.
	SNSService = Service{ID: "SNS", Name: "sns", Protocol: AWSQuery, Version: "2010-03-31",
		XMLNamespace: "http://sns.amazonaws.com/doc/2010-03-31/"}
	// SSMService is AWS Systems Manager (awsJson1_1): the rez_agent
	// processor's GetParameter.
	SSMService = Service{ID: "SSM", Name: "ssm", Protocol: AWSJSON11, TargetPrefix: "AmazonSSM"}
	// EventsService is Amazon EventBridge (awsJson1_1): AgenticPM's
	// PutEvents. Its signing name is "events", its service ID
	// "EventBridge" (AWS_ENDPOINT_URL_EVENTBRIDGE).
	EventsService = Service{ID: "EventBridge", Name: "events", Protocol: AWSJSON11, TargetPrefix: "AWSEvents"}
	// KMSService is AWS KMS (awsJson1_1): the AgenticPM API's Encrypt.
	// Local KMS (devtools/kmslocal) serves it in make dev and the service
	// tests; a Server of it answers what Local KMS cannot be made to
	// (a throttle, an injected error).
	KMSService = Service{ID: "KMS", Name: "kms", Protocol: AWSJSON11, TargetPrefix: "TrentService"}
)
