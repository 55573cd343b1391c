package main

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

// Ports of the fleet. Workers listen for the data plane on dataPort and
// gossip on gossipPort; the main node gossips on gossipPort. The security
// group admits them only from its own members.
const (
	gossipPort        = 7946
	dataPort          = 7947
	mainMetricsPort   = 9090
	workerMetricsPort = 9091
)

// binary is one executable uploaded to S3 with its SHA-256, which the
// instance checks before installing it.
type binary struct {
	Name, URI, SHA256 string
}

// bootConfig is what an instance's user-data needs. It holds names and
// addresses only: the cluster key is read from SSM on the instance.
type bootConfig struct {
	Run, Region, KeyParam string
	Binaries              []binary
	// Worker only.
	MainAddr string
	// Main node only.
	StreamURI, KronScale, Workers, OutPrefix, MainArgs string
	// KronPass is the generator's --pass-updates, "" for its default.
	KronPass string
}

var bootTemplate = template.Must(template.New("boot").Funcs(bootFuncs).Parse(`#cloud-config
# sketchcc run {{.Run}}: {{if .MainAddr}}worker{{else}}main node{{end}}
write_files:
  - path: /usr/local/lib/sketchcc/install.sh
    permissions: '0755'
    content: |
      #!/bin/bash
      # Fetch the cluster key and the binaries, check them, start the service.
      set -euo pipefail
      export AWS_REGION={{q .Region}}
      install -d -m 0700 /etc/sketchcc
      # The instance profile can take a few seconds to be usable.
      for _ in $(seq 1 30); do
        if aws ssm get-parameter --name {{q .KeyParam}} --with-decryption \
             --query Parameter.Value --output text >/etc/sketchcc/cluster.key.tmp; then break; fi
        sleep 5
      done
      test -s /etc/sketchcc/cluster.key.tmp
      chmod 0400 /etc/sketchcc/cluster.key.tmp
      mv /etc/sketchcc/cluster.key.tmp /etc/sketchcc/cluster.key
{{- range .Binaries}}
      aws s3 cp --only-show-errors {{q .URI}} /tmp/{{.Name}}
      echo {{q (printf "%s  /tmp/%s" .SHA256 .Name)}} | sha256sum --check --strict -
      install -m 0755 /tmp/{{.Name}} /usr/local/bin/{{.Name}}
{{- end}}
{{- if .MainAddr}}
      systemctl daemon-reload
      systemctl enable --now sketchcc-worker.service
{{- else}}
      install -d /data /var/lib/sketchcc
{{- if .KronScale}}
      /usr/local/bin/streamtool gen kron --scale {{.KronScale}} --seed 1 --no-cum{{if .KronPass}} --pass-updates {{.KronPass}}{{end}} -o /data/stream.bin
{{- else}}
      aws s3 cp --only-show-errors {{q .StreamURI}} /data/stream.bin
{{- end}}
      systemctl daemon-reload
      systemctl start --no-block sketchcc-main.service
{{- end}}
{{- if .MainAddr}}
  - path: /etc/systemd/system/sketchcc-worker.service
    content: |
      [Unit]
      Description=sketchcc worker, run {{.Run}}
      After=network-online.target
      Wants=network-online.target
      StartLimitIntervalSec=0
      [Service]
      ExecStart=/usr/local/bin/worker --join {{.MainAddr}} --listen 0.0.0.0:{{dataPort}} --gossip-port {{gossipPort}} --cluster-key-file /etc/sketchcc/cluster.key --metrics-listen 0.0.0.0:{{workerMetricsPort}} --log-format json
      # Whatever the exit: until the main node listens, after a crash, after
      # --rejoin-timeout, and after a clean exit too (a stop, a main node that
      # left), so the instance serves the next main node until teardown.
      Restart=always
      RestartSec=5
      [Install]
      WantedBy=multi-user.target
{{- else}}
  - path: /usr/local/lib/sketchcc/run-main.sh
    permissions: '0755'
    content: |
      #!/bin/bash
      # Ingest the stream with the workers, then upload the result and the log.
      set -uo pipefail
      export AWS_REGION={{q .Region}}
      out=/var/lib/sketchcc
      /usr/local/bin/main-node --stream /data/stream.bin --listen 0.0.0.0:{{gossipPort}} --local-workers 0 \
        --expect-workers {{.Workers}} --wait-timeout 30m --cluster-key-file /etc/sketchcc/cluster.key \
        --metrics-listen 0.0.0.0:{{mainMetricsPort}} --log-format json --log-level info --progress never --json {{.MainArgs}} \
        >$out/result.json 2>$out/main-node.log
      status=$?
      aws s3 cp --only-show-errors $out/main-node.log {{q (printf "%s/main-node.log" .OutPrefix)}}
      if [ $status -eq 0 ]; then
        aws s3 cp --only-show-errors $out/result.json {{q (printf "%s/result.json" .OutPrefix)}}
      else
        echo "main-node exit status $status" >$out/failed
        aws s3 cp --only-show-errors $out/failed {{q (printf "%s/failed" .OutPrefix)}}
      fi
  - path: /etc/systemd/system/sketchcc-main.service
    content: |
      [Unit]
      Description=sketchcc main node, run {{.Run}}
      After=network-online.target
      [Service]
      Type=oneshot
      ExecStart=/usr/local/lib/sketchcc/run-main.sh
{{- end}}
runcmd:
  - [/usr/local/lib/sketchcc/install.sh]
`))

var bootFuncs = template.FuncMap{
	"q":          shellQuote,
	"gossipPort": func() int { return gossipPort }, "dataPort": func() int { return dataPort },
	"mainMetricsPort": func() int { return mainMetricsPort }, "workerMetricsPort": func() int { return workerMetricsPort },
}

// userData renders the cloud-init user-data of a main node (c.MainAddr
// empty) or a worker.
func userData(c bootConfig) (string, error) {
	var b bytes.Buffer
	if err := bootTemplate.Execute(&b, c); err != nil {
		return "", fmt.Errorf("user-data: %w", err)
	}
	if b.Len() > 16<<10 {
		return "", fmt.Errorf("user-data of %d bytes exceeds EC2's 16 KiB", b.Len())
	}
	return strings.TrimLeft(b.String(), "\n"), nil
}
