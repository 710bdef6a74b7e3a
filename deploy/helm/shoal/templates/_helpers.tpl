{{/* Names, labels and the pieces every Shoal container shares. */}}

{{- define "shoal.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "shoal.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's object name: <fullname>-<component>, within 63 characters. */}}
{{- define "shoal.component" -}}
{{- printf "%s-%s" (include "shoal.fullname" .root | trunc (int (sub 62 (len .component))) | trimSuffix "-") .component -}}
{{- end -}}

{{- define "shoal.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "shoal.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: {root, component}. */}}
{{- define "shoal.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shoal.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "shoal.componentLabels" -}}
{{ include "shoal.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "shoal.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "shoal.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "shoal.secretName" -}}
{{- default (include "shoal.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "shoal.image" -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}

{{/* DATABASE_URL (and, with .secretKey, SHOAL_SECRET_KEY) from the Secret. */}}
{{- define "shoal.secretEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "shoal.secretName" .root }}
      key: {{ .root.Values.secrets.databaseUrlKey }}
{{- if .secretKey }}
- name: SHOAL_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "shoal.secretName" .root }}
      key: {{ .root.Values.secrets.secretKeyKey }}
{{- end }}
{{- end -}}

{{/* Logging, shared by serve, scheduler and worker. */}}
{{- define "shoal.logEnv" -}}
- name: SHOAL_LOG_FORMAT
  value: {{ .Values.config.logFormat | quote }}
{{- with .Values.config.rustLog }}
- name: RUST_LOG
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* OpenTelemetry trace export, shared by serve, scheduler and worker: off without an endpoint. */}}
{{- define "shoal.tracingEnv" -}}
{{- with .Values.config.tracing }}
{{- if .endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .endpoint | quote }}
- name: OTEL_TRACES_SAMPLER
  value: {{ .sampler | quote }}
{{- with .samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
- name: OTEL_BSP_MAX_QUEUE_SIZE
  value: {{ int64 .maxQueueSize | toString | quote }}
{{- with .serviceName }}
- name: OTEL_SERVICE_NAME
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* The egress policy's allowances, shared by serve, scheduler and worker. */}}
{{- define "shoal.egressEnv" -}}
{{- with .Values.config.egressAllow }}
- name: SHOAL_EGRESS_ALLOW
  value: {{ join "," . | quote }}
{{- end }}
{{- end -}}

{{/* The egress policy's allowances and the answer cap, shared by serve and worker. */}}
{{- define "shoal.outboundEnv" -}}
{{- include "shoal.egressEnv" . }}
{{- with .Values.config.maxResponseBytes }}
- name: SHOAL_MAX_RESPONSE_BYTES
  value: {{ int64 . | toString | quote }}
{{- end }}
{{- end -}}

{{/* The quotas of tenants whose own limits do not set them: serve and scheduler must agree. */}}
{{- define "shoal.tenantDefaultsEnv" -}}
{{- with .Values.config.tenantDefaults }}
- name: SHOAL_TENANT_DEFAULTS
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{- define "shoal.publicUrlEnv" -}}
{{- with .Values.config.publicUrl -}}
- name: SHOAL_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* host:port to bind, bracketing an IPv6 host. */}}
{{- define "shoal.listen" -}}
{{- if contains ":" .root.Values.config.listenHost -}}
[{{ .root.Values.config.listenHost }}]:{{ .port }}
{{- else -}}
{{ .root.Values.config.listenHost }}:{{ .port }}
{{- end -}}
{{- end -}}

{{- define "shoal.podSecurity" -}}
serviceAccountName: {{ include "shoal.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Pod annotations: the component's own plus Prometheus scrape hints. {root, component, port, extra} */}}
{{- define "shoal.podAnnotations" -}}
{{- $annotations := dict -}}
{{- if .root.Values.metrics.scrapeAnnotations -}}
{{- $_ := set $annotations "prometheus.io/scrape" "true" -}}
{{- $_ := set $annotations "prometheus.io/port" (toString .port) -}}
{{- $_ := set $annotations "prometheus.io/path" "/metrics" -}}
{{- end -}}
{{- $annotations = merge (deepCopy .extra) $annotations -}}
{{- with $annotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "shoal.podLabels" -}}
{{ include "shoal.selectorLabels" . }}
{{- with .root.Values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The desired-instances series the worker autoscalers read: the leading scheduler's. */}}
{{- define "shoal.desiredInstancesMetric" -}}
shoal_scheduler_desired_instances
{{- end -}}

{{/* What values.schema.json cannot say: relations between values. */}}
{{- define "shoal.checkValues" -}}
{{- $tick := include "shoal.milliseconds" .Values.scheduler.tick | int64 -}}
{{- $leaseTtl := include "shoal.milliseconds" .Values.scheduler.leaseTtl | int64 -}}
{{- if lt $leaseTtl (mul 2 $tick) -}}
{{- fail (printf "scheduler.leaseTtl (%s) must be at least twice scheduler.tick (%s): the leader renews its lease once a tick" .Values.scheduler.leaseTtl .Values.scheduler.tick) -}}
{{- end -}}
{{- $autoscaling := .Values.worker.autoscaling -}}
{{- if ne $autoscaling.mode "none" -}}
{{- if gt (int $autoscaling.minReplicas) (int $autoscaling.maxReplicas) -}}
{{- fail (printf "worker.autoscaling.minReplicas (%v) must not exceed worker.autoscaling.maxReplicas (%v)" $autoscaling.minReplicas $autoscaling.maxReplicas) -}}
{{- end -}}
{{- if gt (int $autoscaling.instancesPerWorker) (int .Values.worker.capacity) -}}
{{- fail (printf "worker.autoscaling.instancesPerWorker (%v) must not exceed worker.capacity (%v): the scheduler places at most capacity instances on a worker" $autoscaling.instancesPerWorker .Values.worker.capacity) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A duration as values.schema.json admits it (500ms, 10s, 5m, 1h, 1d, or plain seconds), in
milliseconds. */}}
{{- define "shoal.milliseconds" -}}
{{- $number := regexFind "^[0-9]+" . | int64 -}}
{{- $unit := trimPrefix (toString $number) . -}}
{{- $factor := get (dict "ms" 1 "" 1000 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000) $unit | int64 -}}
{{- mul $number $factor -}}
{{- end -}}
