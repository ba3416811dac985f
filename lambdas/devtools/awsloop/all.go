package awsloop

import "errors"

// Fakes is one started fake of each service a Nucleus-style executor calls.
type Fakes struct {
	STS *STS
	EC2 *EC2
	RDS *RDS
	ECS *ECS
}

// StartAll starts STS, EC2, RDS and ECS fakes in the lenient mode local
// development needs: any role can be assumed, and any well-formed instance,
// database or service exists on first use. Tests that check refusals
// start the fakes themselves.
func StartAll() (*Fakes, error) {
	f := &Fakes{STS: NewSTS(), EC2: NewEC2(), RDS: NewRDS(), ECS: NewECS()}
	f.STS.TrustAll()
	f.EC2.AcceptUnknown()
	f.RDS.AcceptUnknown()
	f.ECS.AcceptUnknown()
	for _, s := range f.servers() {
		if err := s.Start(); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

func (f *Fakes) servers() []*Server {
	return []*Server{f.STS.Server, f.EC2.Server, f.RDS.Server, f.ECS.Server}
}

// Env returns the service-specific endpoint variables that point the SDK
// clients of a function at the fakes (AWS_ENDPOINT_URL_STS, _EC2, _RDS,
// _ECS). Give them to the function's environment.
func (f *Fakes) Env() map[string]string {
	env := map[string]string{}
	for _, s := range f.servers() {
		env[s.Service().EndpointEnv()] = s.URL()
	}
	return env
}

// Close stops every fake.
func (f *Fakes) Close() error {
	var errs []error
	for _, s := range f.servers() {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}
