package icefloe.rck;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.view.ViewCatalogTests;
import org.junit.jupiter.api.extension.RegisterExtension;

/** iceberg-core's view catalog test suite against icefloe's REST server. */
public class IcefloeViewCatalogTests extends ViewCatalogTests<RESTCatalog> {
  @RegisterExtension static final RckServer SERVER = new RckServer();

  @Override
  protected RESTCatalog catalog() {
    return SERVER.client();
  }

  @Override
  protected Catalog tableCatalog() {
    return SERVER.client();
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
