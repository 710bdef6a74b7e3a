# A tenant with one function app: the app has a system-assigned identity and a queue-triggered
# function, and a deployment pipeline's service principal may invoke the app's functions.
#
# Provider settings come from SHOAL_ENDPOINT and SHOAL_TOKEN (a platform administrator's token:
# tenants are written at platform scope); see docs/terraform/README.md.

terraform {
  required_providers {
    shoal = { source = "shoal/shoal" }
  }
}

provider "shoal" {}

variable "tenant" {
  description = "Name of the tenant to create."
  type        = string
  default     = "contoso"
}

variable "handler_url" {
  description = "Base URL of the function app's handler."
  type        = string
  default     = "http://127.0.0.1:7071/api"
}

resource "shoal_tenant" "this" {
  name         = var.tenant
  display_name = "Contoso"
  limits = {
    max_apps      = 10
    max_instances = 50
  }
}

resource "shoal_function_app" "orders" {
  tenant = shoal_tenant.this.name
  name   = "orders"

  handler = {
    url = var.handler_url
  }

  app_settings = {
    AzureWebJobsStorage = "UseDevelopmentStorage=true"
  }

  host_config = jsonencode({
    extensions = { queues = { batchSize = 16, maxDequeueCount = 5 } }
  })

  scale = {
    limit = 10
  }

  identity = {
    type = "SystemAssigned"
  }
}

resource "shoal_function" "process_order" {
  function_app_id = shoal_function_app.orders.id
  name            = "ProcessOrder"

  config_json = jsonencode({
    bindings = [
      { type = "queueTrigger", direction = "in", name = "order", queueName = "orders", connection = "AzureWebJobsStorage" },
      { type = "queue", direction = "out", name = "done", queueName = "orders-done", connection = "AzureWebJobsStorage" },
    ]
  })

  retry = {
    strategy         = "exponentialBackoff"
    max_retry_count  = 5
    minimum_interval = "00:00:02"
    maximum_interval = "00:01:00"
  }

  # Stop triggering after more than 20 final failures within a minute; the other settings
  # (half-open probe after a one-minute cooldown) are the server's defaults.
  circuit_breaker = {
    failure_threshold = 20
    window            = "00:01:00"
  }
}

resource "shoal_service_principal" "pipeline" {
  tenant = shoal_tenant.this.name
  name   = "pipeline"
}

resource "shoal_role_assignment" "pipeline_invokes_orders" {
  tenant          = shoal_tenant.this.name
  principal_id    = shoal_service_principal.pipeline.principal_id
  role_definition = "Function Invoker"
  scope           = shoal_function_app.orders.id
}

output "app_principal_id" {
  description = "The app's system-assigned identity, for role assignments elsewhere."
  value       = shoal_function_app.orders.identity.principal_id
}

output "pipeline_client_id" {
  value = shoal_service_principal.pipeline.client_id
}

output "pipeline_client_secret" {
  value     = shoal_service_principal.pipeline.client_secret
  sensitive = true
}
