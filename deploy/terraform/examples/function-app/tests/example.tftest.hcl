# `terraform test` against a running Shoal (SHOAL_ENDPOINT, SHOAL_TOKEN): applies the example,
# checks what Shoal computed, plans again, and destroys everything at the end.

run "creates_the_tenant_app_function_and_assignment" {
  command = apply

  assert {
    condition     = shoal_function_app.orders.id == "/tenants/contoso/apps/orders"
    error_message = "the app's id is its API path"
  }
  assert {
    condition     = shoal_function_app.orders.identity.principal_id != null
    error_message = "a system-assigned identity has a principal id"
  }
  assert {
    condition     = shoal_function_app.orders.handler.timeout_seconds == 30
    error_message = "the handler timeout takes the server's default"
  }
  assert {
    condition     = shoal_function_app.orders.scale.mode == "target"
    error_message = "scale mode is target without TARGET_BASED_SCALING_ENABLED=0"
  }
  assert {
    condition     = shoal_function.process_order.trigger_type == "queueTrigger"
    error_message = "the function's trigger is the queue trigger"
  }
  assert {
    condition     = shoal_function.process_order.circuit_breaker.failure_threshold == 20 && shoal_function.process_order.circuit_breaker.cooldown == "00:01:00"
    error_message = "the breaker has the example's threshold and the server's default cooldown"
  }
  assert {
    condition     = shoal_role_assignment.pipeline_invokes_orders.role_definition_name == "Function Invoker"
    error_message = "the pipeline may invoke the app's functions"
  }
  assert {
    condition     = length(shoal_service_principal.pipeline.client_secret) > 0
    error_message = "the service principal's secret is returned on create"
  }
}

run "switches_to_incremental_scaling" {
  command = apply

  variables {
    handler_url = "http://127.0.0.1:7072/api"
  }

  assert {
    condition     = shoal_function_app.orders.handler.url == "http://127.0.0.1:7072/api"
    error_message = "the handler moved in place"
  }
  assert {
    condition     = shoal_function_app.orders.id == "/tenants/contoso/apps/orders"
    error_message = "an in-place update keeps the app"
  }
}
