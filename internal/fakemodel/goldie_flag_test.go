package fakemodel_test

// goldie registers the -update flag; importing it here lets
// "go test ./... -update" run in this package too.
import _ "github.com/sebdah/goldie/v2"
