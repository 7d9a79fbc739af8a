module github.com/pystream/pystream/tools

go 1.26.0

require (
	github.com/pystream/pystream/client v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/cluster v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/log v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/server v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/topic v0.0.0-00010101000000-000000000000
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/stretchr/testify v1.12.1
	github.com/twmb/franz-go v1.22.3
	github.com/xdg-go/scram v1.4.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/pystream/pystream/client => ../client
	github.com/pystream/pystream/cluster => ../cluster
	github.com/pystream/pystream/docs => ../docs
	github.com/pystream/pystream/log => ../log
	github.com/pystream/pystream/server => ../server
	github.com/pystream/pystream/topic => ../topic
)
