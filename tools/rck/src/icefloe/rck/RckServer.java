package icefloe.rck;

import java.util.Map;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The catalog setup both suite bindings share, as a JUnit extension (each binding extends its own
 * suite class, so the setup cannot be a common superclass): one client of the server under test for
 * the whole class, and an empty server before each test.
 */
final class RckServer implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
  private RESTCatalog client;

  RESTCatalog client() {
    return client;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    client = RckClient.open(Map.of());
  }

  @Override
  public void afterAll(ExtensionContext context) {
    RckClient.close(client);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    RckClient.empty(client);
  }
}
