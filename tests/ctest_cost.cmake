# Included by ctest after the gtest_discover_tests lists (tests/CMakeLists.txt): the longest
# tests get a COST, so that a run without Testing/Temporary/CTestCostData.txt (every CI run: a
# fresh clone) starts them first instead of in declaration order, where one of them could start
# last and run alone on one core while the other core idles. The figures are their seconds
# under ASan (.ci/run, 2 cores); only the order matters. A name that no longer exists is ignored.
set_tests_properties(
  CrashSafety.SigkillAtEveryIoOperationOfThePlainRenamePublishKeepsEveryListedRecord
  CrashSafety.SigkillAtEveryIoOperationLeavesAVerifiedMirrorThatTheNextRunCompletes
  PROPERTIES COST 35)
set_tests_properties(
  Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing0of4
  Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing1of4
  Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing2of4
  Points/S3KillTest.KillAtAnyStoreWriteNeverPublishesIncompleteMetadata/Replacing3of4
  PROPERTIES COST 40)
set_tests_properties(LibrepoAccelAbi.EveryTypeAndCacheStateAsLibrepo PROPERTIES COST 20)
