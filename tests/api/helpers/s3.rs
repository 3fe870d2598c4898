//! An S3-compatible server in the test process, checking signatures as S3 does.

use super::*;

/// An S3-compatible server in this test (s3s + s3s-fs over real TCP, checking
/// SigV4 signatures and presigned-URL expiry like S3), storing into a directory.
pub struct S3Server {
    pub endpoint: String,
    pub root: PathBuf,
    pub bucket: String,
}

pub const S3_ACCESS_KEY: &str = "errand-test-key";
pub const S3_SECRET_KEY: &str = "errand-test-secret";

impl S3Server {
    pub async fn start() -> Self {
        use hyper_util::rt::{TokioExecutor, TokioIo};
        use hyper_util::server::conn::auto::Builder;
        let root = std::env::temp_dir().join(format!("errand-s3-{}", Uuid::new_v4().simple()));
        let bucket = "errand-results".to_owned();
        // s3s-fs keeps a bucket as a directory.
        std::fs::create_dir_all(root.join(&bucket)).unwrap();
        let mut builder = s3s::service::S3ServiceBuilder::new(s3s_fs::FileSystem::new(&root).unwrap());
        builder.set_auth(s3s::auth::SimpleAuth::from_single(S3_ACCESS_KEY, S3_SECRET_KEY));
        let service = builder.build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(socket), service).await;
                });
            }
        });
        Self { endpoint, root, bucket }
    }

    /// Storage settings pointing at this server.
    pub fn settings(&self) -> errand::config::S3Settings {
        errand::config::S3Settings {
            endpoint: self.endpoint.clone(),
            public_endpoint: None,
            region: "us-east-1".into(),
            bucket: self.bucket.clone(),
            path_style: true,
            access_key: Some(S3_ACCESS_KEY.into()),
            secret_key: Some(S3_SECRET_KEY.into()),
        }
    }

    /// The objects in the bucket, and anything a multipart upload left behind.
    pub fn objects_and_uploads(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let objects = files_under(&self.root.join(&self.bucket));
        let uploads = files_under(&self.root)
            .into_iter()
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains("upload")))
            .collect();
        (objects, uploads)
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
