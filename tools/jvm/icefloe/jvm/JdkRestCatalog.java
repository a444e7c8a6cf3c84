package icefloe.jvm;

import org.apache.iceberg.catalog.SessionCatalog;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Iceberg's {@code RESTCatalog}, unchanged but for its transport ({@link JdkHttpRestClient}); a
 * no-argument class, so Spark's {@code catalog-impl} can name it.
 */
public class JdkRestCatalog extends RESTCatalog {
  public JdkRestCatalog() {
    super(SessionCatalog.SessionContext.createEmpty(), JdkHttpRestClient::new);
  }
}
