package icefloe.rck;

import java.util.Map;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** iceberg-core's view catalog test suite against icefloe's REST server. */
public class IcefloeViewCatalogTests extends ViewCatalogTests<RESTCatalog> {
  private static RESTCatalog client;

  @BeforeAll
  static void connect() {
    client = RckClient.open(Map.of());
  }

  @AfterAll
  static void disconnect() {
    RckClient.close(client);
  }

  @BeforeEach
  void emptyServer() {
    RckClient.empty(client);
  }

  @Override
  protected RESTCatalog catalog() {
    return client;
  }

  @Override
  protected Catalog tableCatalog() {
    return client;
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
  protected boolean supportsEmptyNamespace() {
    return RckClient.capability("supports-empty-namespace", false);
  }
}
