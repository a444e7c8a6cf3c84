"""icefloe: Apache Iceberg v2 and Apache Paimon tables with Apache Spark as the data plane."""
