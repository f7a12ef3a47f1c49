export {
  type AddRepositoryInput,
  FakeGitHub,
  type FakeGitHubOptions,
  type Fault,
  type FaultSpec,
} from "./server.js";
export type {
  ContentEntry,
  FakeComment,
  FakeDispatch,
  FakeIssue,
  FakePullRequest,
  FakeReaction,
  FakeRepository,
  FakeRole,
  RepositoryContentSource,
  RequestRecord,
} from "./state.js";
