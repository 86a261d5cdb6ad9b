package metrics

import (
	"cmp"
	"context"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/riverqueue/rivercontrib/otelriver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TracesConfigured reports whether an OpenTelemetry trace exporter is configured in the
// environment: OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and
// OTEL_TRACES_EXPORTER is not "none".
func TracesConfigured(getenv func(string) string) bool {
	if strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")) == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Traces starts OpenTelemetry traces when TracesConfigured: spans go over OTLP/HTTP to the
// endpoint getenv names (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT
// followed by /v1/traces), under service.name OTEL_SERVICE_NAME (default "buddi"); the
// exporter reads the other standard variables (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, …) and
// OTEL_RESOURCE_ATTRIBUTES from the process's environment. It returns the queue's plugin that traces every job, and a
// stop that flushes what is left (for at most 5 s). With no exporter configured, or one that
// cannot be used (said in the log: buddi runs on without traces), it starts nothing and
// returns a nil plugin.
func Traces(ctx context.Context, getenv func(string) string, log *slog.Logger) (plugin rivertype.Plugin, stop func()) {
	none := func() {}
	if !TracesConfigured(getenv) {
		return nil, none
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("service", "metrics")
	if p := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"); p == "grpc" || (p == "" && getenv("OTEL_EXPORTER_OTLP_PROTOCOL") == "grpc") {
		log.Warn("no traces are sent: buddi sends them over OTLP/HTTP only, so set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf and point the endpoint at the collector's HTTP port (usually 4318)")
		return nil, none
	}
	endpoint := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") // the whole URL
	if endpoint == "" {
		endpoint = strings.TrimRight(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces" // a base URL
	}
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		log.Warn("no traces are sent: the OpenTelemetry exporter does not start (check OTEL_EXPORTER_OTLP_ENDPOINT)", "err", err)
		return nil, none
	}
	name := cmp.Or(getenv("OTEL_SERVICE_NAME"), "buddi")
	res, err := resource.Merge(resource.Environment(), resource.NewSchemaless(attribute.String("service.name", name)))
	if err != nil {
		res = resource.NewSchemaless(attribute.String("service.name", name))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	log.Info("sending traces to the OpenTelemetry collector", "endpoint", redactedURL(endpoint))
	plugin = otelriver.NewMiddleware(&otelriver.MiddlewareConfig{
		TracerProvider:              tp,
		MeterProvider:               metricnoop.NewMeterProvider(), // the queue's figures are on /metrics
		EnableWorkSpanJobKindSuffix: true,
	})
	return plugin, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("the last traces were not sent", "err", err)
		}
	}
}

// QueuePlugins are the queue's plugins: Jobs, then traces when it is not nil (Traces).
func QueuePlugins(traces rivertype.Plugin) []rivertype.Plugin {
	plugins := []rivertype.Plugin{Jobs{}}
	if traces != nil {
		plugins = append(plugins, traces)
	}
	return plugins
}

// redactedURL is endpoint without a password in it, for the log.
func redactedURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "(an endpoint that is not a URL)"
	}
	return u.Redacted()
}
