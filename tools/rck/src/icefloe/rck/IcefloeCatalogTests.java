package icefloe.rck;

import java.util.Map;
import org.apache.iceberg.catalog.CatalogTests;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.extension.RegisterExtension;

/** iceberg-core's catalog test suite (tables and namespaces) against icefloe's REST server. */
public class IcefloeCatalogTests extends CatalogTests<RESTCatalog> {
  @RegisterExtension static final RckServer SERVER = new RckServer();

  @Override
  protected RESTCatalog catalog() {
    return SERVER.client();
  }

  @Override
  protected RESTCatalog initCatalog(String name, Map<String, String> properties) {
    return RckClient.open(properties);
  }

  @Override
  protected boolean requiresNamespaceCreate() {
    return RckClient.capability("requires-namespace-create", true);
  }

  @Override
  protected boolean supportsServerSideRetry() {
    return RckClient.capability("supports-server-side-retry", true);
  }

  @Override
  protected boolean overridesRequestedLocation() {
    return RckClient.capability("overrides-requested-location", false);
  }

  @Override
  protected boolean supportsNamespaceProperties() {
    return RckClient.capability("supports-namespace-properties", true);
  }

  @Override
  protected boolean supportsNestedNamespaces() {
    return RckClient.capability("supports-nested-namespaces", true);
  }

  @Override
  protected boolean supportsNamesWithSlashes() {
    return RckClient.capability("supports-names-with-slashes", true);
  }

  @Override
  protected boolean supportsNamesWithDot() {
    return RckClient.capability("supports-names-with-dot", true);
  }

  @Override
  protected boolean supportsEmptyNamespace() {
    return RckClient.capability("supports-empty-namespace", false);
  }
}
